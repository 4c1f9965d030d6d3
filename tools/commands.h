// Subcommands of `tandem`. Each registers its options on the root app; its callback does
// the work and sets the exit code.
#pragma once

namespace CLI {
class App;
}

namespace tandem::cli {

// --hw's help, one resolution rule for every command (sched/target/target.h, resolve_model).
inline constexpr const char* kHwHelp =
    "hardware model: a name (trn2: <name>.yaml in the directories `tandem models dirs` lists) or a model file "
    "(a path, or a name ending in .yaml); default: the kernel's target";

void add_opt_command(CLI::App& root, int& exit_code);
void add_sim_command(CLI::App& root, int& exit_code);
void add_ab_command(CLI::App& root, int& exit_code);
void add_sweep_command(CLI::App& root, int& exit_code);
void add_tune_command(CLI::App& root, int& exit_code);
void add_models_command(CLI::App& root, int& exit_code);
void add_amdgpu_commands(CLI::App& root, int& exit_code);  // import-amdgpu, export-amdgpu

}  // namespace tandem::cli
