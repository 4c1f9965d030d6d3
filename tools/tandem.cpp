// tandem: the command-line front end. Exit codes: 0 success, 1 user error (one `error:`
// line), 2 internal error.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "sched/support/error.h"
#include "sched/support/log.h"
#include "sched/support/output.h"
#include "sched/support/provenance.h"
#include "sched/support/suggest.h"
#include "tools/commands.h"
#include "tools/output.h"

namespace {

// After a failed parse, the misspelt command or long option on the command line, named with
// the closest known one ("" when there is none; CLI11's own message is shown then). CLI11
// calls an unknown command a missing one and an unknown option an unexpected argument.
std::string misspelt(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  std::vector<std::string> longs = {"--help"};
  auto add_longs = [&](CLI::App* a) {
    for (const CLI::Option* o : a->get_options())
      for (const std::string& n : o->get_lnames()) longs.push_back("--" + n);
  };
  add_longs(cur);
  bool in_command = false;  // past a command's name, positionals are its arguments
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
      const std::string name = arg.substr(0, arg.find('='));
      if (std::find(longs.begin(), longs.end(), name) == longs.end())
        return "unknown option '" + name + "'" + tandem::did_you_mean(name, longs);
      const CLI::Option* o = cur->get_option_no_throw(name);
      if (!o && cur->get_parent()) o = cur->get_parent()->get_option_no_throw(name);
      if (o && o->get_type_size() > 0 && name == arg) ++i;  // its value follows
      continue;
    }
    if (arg[0] == '-' || in_command) continue;
    std::vector<std::string> commands;
    for (const CLI::App* c : cur->get_subcommands([](CLI::App*) { return true; })) commands.push_back(c->get_name());
    if (commands.empty()) {
      in_command = true;
      continue;
    }
    if (std::find(commands.begin(), commands.end(), arg) == commands.end()) {
      std::string list;
      for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
      return "unknown command '" + arg + "'" + tandem::did_you_mean(arg, commands) + " (commands: " + list + ")";
    }
    cur = cur->get_subcommand(arg);
    add_longs(cur);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, reported as a full disk is,
  // instead of ending the process with nothing said.
  ::signal(SIGXFSZ, SIG_IGN);
  tandem::name_stop_line("tandem");
  CLI::App app{
      "Tandem: a cycle-approximate accelerator simulator with a software-pipelining scheduler.\n"
      "Reads kernels in the .kir text IR (docs/ir.md) and hardware models from the model directories\n"
      "(tandem models dirs; docs/models.md)."};
  app.set_version_flag("--version", "tandem " + tandem::tandem_version());
  app.require_subcommand(1);
  app.fallthrough();  // --log-level may follow the subcommand
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (logs go to stderr)")
      ->capture_default_str();
  int exit_code = 0;
  app.parse_complete_callback([&] {
    tandem::set_log_level(log_level);
    for (const CLI::App* command : app.get_subcommands()) tandem::name_stop_line("tandem " + command->get_name());
  });
  tandem::cli::add_opt_command(app, exit_code);
  tandem::cli::add_sim_command(app, exit_code);
  tandem::cli::add_ab_command(app, exit_code);
  tandem::cli::add_sweep_command(app, exit_code);
  tandem::cli::add_tune_command(app, exit_code);
  tandem::cli::add_models_command(app, exit_code);
  tandem::cli::add_amdgpu_commands(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e);
      return 0;
    }
    const std::string why = misspelt(app, argc, argv);
    std::cerr << tandem::cli::for_stderr("error: " + (why.empty() ? std::string(e.what()) : why) +
                                         " (see tandem --help)")
              << "\n";
    return 1;
  } catch (const tandem::Error& e) {
    std::cout.flush();
    std::cerr << tandem::cli::for_stderr(tandem::format_error(e)) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << tandem::cli::for_stderr(std::string("internal error: ") + e.what()) << "\n";
    return 2;
  }
  // Results printed to stdout must have reached it: a full disk is an error, not exit 0.
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || std::cout.fail()) {
    std::cerr << tandem::cli::for_stderr("error: cannot write the results to standard output: they are incomplete")
              << "\n";
    return 1;
  }
  return exit_code;
}
