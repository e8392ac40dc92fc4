// A backend plugin for the loader's tests, built in three variants from this one source:
// BATON_TEST_PLUGIN_GOOD serves the CPU backend through the plugin interface, _OLD_ABI claims
// ABI version 1 (a plugin built before Buffer gained methods), _NO_DEVICE reports that its
// device is missing.

#include "baton/error.h"
#include "core/runtime/backend_plugin_abi.h"
#include "core/runtime/backend_registry.h"

namespace {

#if defined(BATON_TEST_PLUGIN_GOOD)
constexpr const char* kName = "testgood";
constexpr uint32_t kAbi = baton::kBackendAbiVersion;
#elif defined(BATON_TEST_PLUGIN_OLD_ABI)
constexpr const char* kName = "testoldabi";
constexpr uint32_t kAbi = 1;
static_assert(kAbi != baton::kBackendAbiVersion);
#else
constexpr const char* kName = "testnodevice";
constexpr uint32_t kAbi = baton::kBackendAbiVersion;
#endif

baton::BackendStatus probe() {
#if defined(BATON_TEST_PLUGIN_NO_DEVICE)
  return {.usable = false, .detail = "no test device present"};
#else
  return {.usable = true, .detail = "the CPU backend behind the plugin interface"};
#endif
}

// The plugin's own CPU backend (its copy of the runtime registers it), behind the plugin ABI.
std::unique_ptr<baton::Backend> create(const baton::BackendOptions& options) {
  return baton::BackendRegistry::global().create("cpu", options);
}

const baton::BackendPluginInfo kInfo{.abi_version = kAbi,
                                     .name = kName,
                                     .description = "loader test plugin",
                                     .probe = probe,
                                     .create = create};

}  // namespace

extern "C" const baton::BackendPluginInfo* baton_backend_plugin_entry(uint32_t) {
  return &kInfo;
}
