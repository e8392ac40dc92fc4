#include <cstdio>

#include "core/backend_registry.h"
#include "tools/commands.h"

namespace baton::cli {

Action add_backends_command(CLI::App& app) {
  app.add_subcommand("backends", "list the backends built in or found, and whether each is usable");
  return [] {
    std::printf("%-8s %-9s %s\n", "backend", "status", "details");
    for (const BackendEntry& entry : BackendRegistry::global().entries()) {
      const BackendStatus status = entry.probe();
      std::printf("%-8s %-9s %s: %s\n", entry.name.c_str(), status.usable ? "usable" : "unusable",
                  entry.description.c_str(), status.detail.c_str());
    }
    return 0;
  };
}

}  // namespace baton::cli
