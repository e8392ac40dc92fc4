#pragma once

// gpusim's stand-in for the vendor BLAS: behind the Gemm interface that cuBLAS implements in the
// CUDA plugin, a host GEMM queued on the stream in order with the kernels, which checks that
// it reads written device memory.

#include <memory>

#include "backends/gpu/gemm.h"

namespace gpusim {

std::unique_ptr<baton::gpu::Gemm> make_host_gemm(gpuStream_t stream);

}  // namespace gpusim
