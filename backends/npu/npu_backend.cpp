// The NPU backend slot: registered so that `--backend npu` and `baton backends` name what a
// vendor backend must provide, instead of "unknown backend". No vendor runtime is linked.

#include <string>

#include "baton/error.h"
#include "core/runtime/backend_registry.h"
#include "core/runtime/op.h"

namespace baton {
namespace {

// Every op of the op table, so that the list cannot fall behind the ops models use.
std::string npu_requirements() {
  std::string ops;
  for (const OpSchema& op : kOpSchemas) {
    ops += (ops.empty() ? "" : ", ") + std::string(op.name);
  }
  return "no NPU vendor backend is installed. A vendor backend is a plugin "
         "libbaton-backend-npu.so (see docs/backends.md) that implements baton::Backend: "
         "allocate/upload/download device memory, import_tensor for weights, supports() and "
         "execute() for the ops " +
         ops +
         " (core/runtime/op.h; attention paged through block tables, soft-capped and "
         "sliding-window), over the dtypes f32, f16, bf16, q8_0 and q4_0 (weights) and i32 (ids, "
         "positions)";
}

BackendEntry make_npu_entry() {
  return BackendEntry{
      .name = "npu",
      .description = "vendor NPU (stub)",
      .probe = [] { return BackendStatus{.usable = false, .detail = npu_requirements()}; },
      .create = [](const BackendOptions&) -> std::unique_ptr<Backend> {
        throw Error(ErrorCategory::kBackend, "backend 'npu' is not usable: " + npu_requirements());
      }};
}

}  // namespace
}  // namespace baton

BATON_REGISTER_BACKEND(npu, baton::make_npu_entry())
