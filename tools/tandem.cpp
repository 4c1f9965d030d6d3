// tandem: the command-line front end. Exit codes: 0 success, 1 user error (one `error:`
// line), 2 internal error.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "sched/support/error.h"
#include "sched/support/log.h"
#include "sched/support/provenance.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
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
  app.parse_complete_callback([&] { tandem::set_log_level(log_level); });
  tandem::cli::add_opt_command(app, exit_code);
  tandem::cli::add_sim_command(app, exit_code);
  tandem::cli::add_ab_command(app, exit_code);
  tandem::cli::add_sweep_command(app, exit_code);
  tandem::cli::add_models_command(app, exit_code);
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
    std::cerr << "error: " << e.what() << " (see tandem --help)\n";
    return 1;
  } catch (const tandem::Error& e) {
    std::cout.flush();
    std::cerr << tandem::format_error(e) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
  return exit_code;
}
