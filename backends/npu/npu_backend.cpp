// The NPU backend slot: registered so that `--backend npu` and `baton backends` name what a
// vendor backend must provide, instead of "unknown backend". No vendor runtime is linked.

#include "baton/error.h"
#include "core/backend_registry.h"

namespace baton {
namespace {

std::string npu_requirements() {
  return "no NPU vendor backend is installed. A vendor backend is a plugin "
         "libbaton-backend-npu.so (see docs/backends.md) that implements baton::Backend: "
         "allocate/upload/download device memory, import_tensor for weights, supports() and "
         "execute() for the ops embedding, matmul, rms_norm, rope, kv_write, attention (paged "
         "through block tables), swiglu, add, softmax, argmax and get_rows (and geglu, scale, "
         "softcap, soft-capped and sliding-window attention for Gemma 2), over the dtypes f32, "
         "f16, bf16, q8_0 and q4_0 (weights) and i32 (ids, positions)";
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
