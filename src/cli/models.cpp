// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `gpuadvisor models`: the model presets.
#include "cli.hpp"

namespace gpuadvisor::cli {

namespace {

class ModelsCommand : public Command {
 public:
  explicit ModelsCommand(CLI::App& parent) { app = parent.add_subcommand("models", "List the model presets"); }
  int run(const GlobalOptions& g) override {
    print_table(models_table(), load(g), "models", "models", g);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> add_models_command(CLI::App& parent) { return std::make_unique<ModelsCommand>(parent); }

}  // namespace gpuadvisor::cli
