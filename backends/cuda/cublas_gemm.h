#pragma once

// The CUDA backend's GEMM: cuBLAS, on the backend's stream.

#include <memory>

#include "backends/gpu/device_allocator.h"
#include "backends/gpu/gemm.h"

namespace baton::cuda {

// A cuBLAS handle bound to `stream`; scratch memory (x in 16 bits, dequantized weights) comes
// from `allocator`. Throws Error(kBackend) when cuBLAS cannot be set up.
std::unique_ptr<gpu::Gemm> make_cublas_gemm(gpuStream_t stream,
                                            std::shared_ptr<gpu::DeviceAllocator> allocator);

}  // namespace baton::cuda
