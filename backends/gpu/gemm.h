#pragma once

// The one part of a GPU backend's matmul that differs by vendor: the product of many rows of x
// with a weight matrix (prefill; decode of quantized weights takes the GEMV kernel). CUDA uses
// cuBLAS (backends/cuda/cublas_gemm.cpp); ROCm 5.2 ships no BLAS, so it uses the project's tiled
// kernel, which CUDA also uses when BATON_GPU_GEMM=tiled (how the lent NVIDIA machines test the
// path ROCm takes).

#include <cstdint>
#include <memory>

#include "backends/gpu/gpu_runtime.h"
#include "backends/gpu/kernels/kernels.h"

namespace baton::gpu {

class Gemm {
 public:
  virtual ~Gemm() = default;
  // Queues out[n, m] = x[n, k] * w[m, k]^T on the backend's stream, with fp32 accumulation: x
  // and out are f32 and w of `type`, all in device memory; n, k and m are positive. Throws
  // Error(kBackend) when the library or a launch fails.
  virtual void multiply(WeightType type, const void* w, const float* x, float* out, int64_t n,
                        int64_t k, int64_t m) = 0;
};

// gpu::tiled_gemm on `stream`: weights decoded to f32 as their tiles load, fp32 throughout.
std::unique_ptr<Gemm> make_tiled_gemm(gpuStream_t stream);

}  // namespace baton::gpu
