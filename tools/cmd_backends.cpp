#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/runtime/backend_plugin.h"
#include "core/runtime/backend_registry.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

// Plugins Baton ships, listed even when they were not built here so users learn they exist.
constexpr const char* kGpuPlugins[] = {"cuda", "rocm", "gpusim", "gpusim64"};

}  // namespace

Action add_backends_command(CLI::App& app) {
  app.add_subcommand("backends",
                     "list the backends built in or found as plugins, and whether each is usable");
  return [] {
    load_all_backend_plugins(BackendRegistry::global());
    std::printf("%-12s %-9s %s\n", "backend", "status", "details");
    std::vector<std::string> listed;
    for (const BackendEntry& entry : BackendRegistry::global().entries()) {
      const BackendStatus status = entry.probe();
      std::printf("%-12s %-9s %s: %s\n", entry.name.c_str(), status.usable ? "usable" : "unusable",
                  entry.description.c_str(), status.detail.c_str());
      listed.push_back(entry.name);
    }
    std::string searched;
    for (const auto& dir : backend_plugin_directories()) {
      searched += (searched.empty() ? "" : ", ") + dir.string();
    }
    for (const char* plugin : kGpuPlugins) {
      if (std::ranges::find(listed, plugin) != listed.end()) continue;
      std::printf("%-12s %-9s plugin libbaton-backend-%s.so not found in %s\n", plugin, "missing",
                  plugin, searched.c_str());
    }
    return 0;
  };
}

}  // namespace baton::cli
