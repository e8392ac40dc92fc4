#pragma once

// The one entry point a backend plugin (libbaton-backend-NAME.so) exports. Plugins implement
// baton::Backend in C++ against the same headers as the core, so the core and a plugin must come
// from the same Baton build of this interface: kBackendAbiVersion changes whenever Backend,
// Tensor, Buffer, Graph, Node, OpKind (new ops go at its end) or the op parameter types change, and
// the loader refuses a plugin built for another version with a message naming both.

#include <cstdint>
#include <memory>

#include "core/runtime/backend.h"

namespace baton {

// 2: Buffer gained release_pages, discard and data_for_overwrite; ops/op.h moved to core/op.h.
// 3: ops geglu, scale and softcap with ScalarParams; AttentionParams gained softcap and window;
//    DTypeTraits gained the row codecs; plugins link their own copy of the runtime layer.
inline constexpr uint32_t kBackendAbiVersion = 3;

// What the entry point returns; static storage in the plugin.
struct BackendPluginInfo {
  uint32_t abi_version;     // kBackendAbiVersion of the headers the plugin was built with
  const char* name;         // what --backend takes: "cuda", "rocm"
  const char* description;  // one line for `baton backends`
  // Cheap check that the plugin can run here (driver loaded, a device present); never throws.
  BackendStatus (*probe)();
  // Throws baton::Error when the device cannot be set up.
  std::unique_ptr<Backend> (*create)(const BackendOptions& options);
};

}  // namespace baton

// The symbol the loader looks up with dlsym. `core_abi_version` is the loader's
// kBackendAbiVersion; a plugin returns its info either way so that a mismatch can be reported.
#define BATON_BACKEND_PLUGIN_ENTRY baton_backend_plugin_entry
extern "C" __attribute__((visibility("default"))) const baton::BackendPluginInfo*
baton_backend_plugin_entry(uint32_t core_abi_version);
