#pragma once

// gpusim's stand-in for the vendor BLAS: behind the Gemm interface, the CUDA plugin's GEMM with a
// host GEMM, queued on the stream in order with the kernels, in cuBLAS's place. It checks that
// it reads written device memory and writes allocated device memory.

#include <memory>

#include "backends/gpu/device_allocator.h"
#include "backends/gpu/gemm.h"

namespace gpusim {

std::unique_ptr<baton::gpu::Gemm> make_host_gemm(
    gpuStream_t stream, std::shared_ptr<baton::gpu::DeviceAllocator> allocator);

}  // namespace gpusim
