#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/runtime/backend_registry.h"

namespace baton {

// Backend plugins are shared libraries named libbaton-backend-NAME.so, looked for in order in
// each directory of $BATON_BACKEND_PATH (colon-separated), the directory holding the Baton
// library itself, the running executable's directory, and ../lib beside it.
std::vector<std::filesystem::path> backend_plugin_directories();

// Looks for libbaton-backend-NAME.so and registers what it finds, in the place of any entry of
// that name: the plugin's backend, or, when
// the file is there but cannot be used (a missing library, another ABI version, no entry point),
// an entry whose probe gives that reason. Returns false when no such file exists.
bool load_backend_plugin(BackendRegistry& registry, const std::string& name);

// Registers every plugin file found in the search directories (for `baton backends`).
void load_all_backend_plugins(BackendRegistry& registry);

}  // namespace baton
