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
  CLI::App* show = cmd->add_subcommand(
      "show", "print a model's file, every parameter with its unit and source comment, and its opcodes");
  show->add_option("model", *name, "a model name (trn2) or a model file")->required();
  show->callback([name, &exit_code] {
    std::cout << describe_model(*resolve_model(*name));
    exit_code = 0;
  });
  auto pair = std::make_shared<std::vector<std::string>>();
  CLI::App* diff = cmd->add_subcommand("diff", "print the parameters that differ between two models (names or files)");
  diff->add_option("models", *pair, "model A and model B")->required()->expected(2);
  diff->callback([pair, &exit_code] {
    std::cout << diff_models(*resolve_model(pair->at(0)), *resolve_model(pair->at(1)));
    exit_code = 0;
  });
}

}  // namespace tandem::cli
