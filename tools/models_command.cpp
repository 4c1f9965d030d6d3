// tandem models: which model files this binary finds, and what one offers.
#include <iostream>

#include <CLI/CLI.hpp>

#include "sched/target/target.h"
#include "tools/commands.h"

namespace tandem::cli {

void add_models_command(CLI::App& root, int& exit_code) {
  CLI::App* cmd = root.add_subcommand("models", "List the model directories, or show what a model offers.");
  cmd->require_subcommand(1);
  CLI::App* dirs = cmd->add_subcommand("dirs", "print the directories searched for <name>.yaml, in order");
  dirs->callback([&exit_code] {
    for (const std::string& d : model_dirs()) std::cout << d << "\n";
    exit_code = 0;
  });
  auto name = std::make_shared<std::string>();
  CLI::App* show = cmd->add_subcommand("show", "print a model's file, engines, queues and opcodes");
  show->add_option("model", *name, "a model name (trn2) or a model file")->required();
  show->callback([name, &exit_code] {
    const bool file = name->find_first_of("/.") != std::string::npos;
    std::cout << describe_model(*(file ? load_target(*name) : find_target(*name)));
    exit_code = 0;
  });
}

}  // namespace tandem::cli
