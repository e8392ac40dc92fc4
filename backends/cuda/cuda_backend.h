#pragma once

// The CUDA backend: device memory from a caching allocator, one stream for every kernel, copy
// and cuBLAS call, and the kernels of backends/gpu/kernels. It is built as the plugin
// libbaton-backend-cuda.so (cuda_plugin.cpp), never into the core.

#include <memory>

#include "core/backend.h"

namespace baton::cuda {

// Whether a CUDA device this build can run on is present; never throws.
BackendStatus probe();

// A backend on CUDA device 0 (CUDA_VISIBLE_DEVICES picks which GPU that is). Throws
// Error(kBackend) when the device cannot be set up.
std::unique_ptr<Backend> create(const BackendOptions& options);

}  // namespace baton::cuda
