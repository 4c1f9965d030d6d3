// Subcommands of `tandem`. Each registers its options on the root app; its callback does
// the work and sets the exit code.
#pragma once

namespace CLI {
class App;
}

namespace tandem::cli {

void add_opt_command(CLI::App& root, int& exit_code);
void add_sim_command(CLI::App& root, int& exit_code);
void add_ab_command(CLI::App& root, int& exit_code);
void add_sweep_command(CLI::App& root, int& exit_code);
void add_models_command(CLI::App& root, int& exit_code);

}  // namespace tandem::cli
