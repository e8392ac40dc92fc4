// gpu::Gemm through cuBLAS, out[n, m] = x[n, k] * w[m, k]^T with x and out f32:
//   f32 weights      cublasSgemm (fp32 throughout; TF32 stays off, so results do not depend
//                    on the GPU generation);
//   f16 / bf16       x converted to the weight's type on the device, cublasGemmEx with fp32
//                    accumulation and f32 output;
//   q8_0 / q4_0      the weight decoded to f16 in row chunks, then cublasGemmEx as above, so
//                    prefill runs on tensor cores (decode takes the GEMV kernel before this).
// cuBLAS is column-major: a row-major [rows, cols] matrix is its column-major transpose, so the
// product is computed as out^T[m, n] = w[k, m]^T * x^T[k, n] with leading dimensions k, k, m.

#include "backends/cuda/cublas_gemm.h"

#include <cublas_v2.h>

#include <algorithm>
#include <string>

#include "baton/error.h"

namespace baton::cuda {
namespace {

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(ErrorCategory::kBackend,
                std::string(call) + " failed: " + cublasGetStatusString(status));
  }
}
#define CUBLAS_CHECK(call) check_cublas((call), #call)

// Bytes of f16 weights decoded at once for a quantized prefill GEMM: large enough that each
// GEMM is efficient, small enough not to double a big weight's footprint.
constexpr size_t kDequantChunkBytes = size_t{64} << 20;

class CublasGemm final : public gpu::Gemm {
 public:
  CublasGemm(gpuStream_t stream, std::shared_ptr<gpu::DeviceAllocator> allocator)
      : stream_(stream), allocator_(std::move(allocator)) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    CUBLAS_CHECK(cublasSetStream(handle_, stream_));
    // The default math mode: f32 GEMMs stay in fp32 (no TF32), 16-bit ones accumulate in fp32.
    CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  }
  ~CublasGemm() override { (void)cublasDestroy(handle_); }
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  void multiply(gpu::WeightType type, const void* w, const float* x, float* out, int64_t n,
                int64_t k, int64_t m) override {
    switch (type) {
      case gpu::WeightType::kF32: {
        const float alpha = 1.0f, beta = 0.0f;
        CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m),
                                 static_cast<int>(n), static_cast<int>(k), &alpha,
                                 static_cast<const float*>(w), static_cast<int>(k), x,
                                 static_cast<int>(k), &beta, out, static_cast<int>(m)));
        return;
      }
      case gpu::WeightType::kF16:
      case gpu::WeightType::kBF16: {
        const bool bf16 = type == gpu::WeightType::kBF16;
        const std::shared_ptr<Buffer> x16 = convert_x(x, n * k, bf16);
        gemm_16bit(bf16 ? CUDA_R_16BF : CUDA_R_16F, w, x16->data(), out, n, k, m, m);
        return;
      }
      case gpu::WeightType::kQ8_0:
      case gpu::WeightType::kQ4_0:
        return quantized(type, static_cast<const std::byte*>(w), x, out, n, k, m);
    }
  }

 private:
  void gemm_16bit(cudaDataType type, const void* w, const void* x, float* out, int64_t n, int64_t k,
                  int64_t m, int64_t ldc) {
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(
        handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
        static_cast<int>(k), &alpha, w, type, static_cast<int>(k), x, type, static_cast<int>(k),
        &beta, out, CUDA_R_32F, static_cast<int>(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  // x as f16 or bf16 in scratch memory that lives as long as the returned buffer.
  std::shared_ptr<Buffer> convert_x(const float* x, int64_t numel, bool bf16) {
    std::shared_ptr<Buffer> buffer = allocator_->allocate(static_cast<size_t>(numel) * 2);
    if (bf16) {
      gpu::convert_to_bf16(x, reinterpret_cast<gpu_bf16*>(buffer->data()), numel, stream_);
    } else {
      gpu::convert_to_half(x, reinterpret_cast<gpu_half*>(buffer->data()), numel, stream_);
    }
    return buffer;
  }

  void quantized(gpu::WeightType type, const std::byte* w, const float* x, float* out, int64_t n,
                 int64_t k, int64_t m) {
    const std::shared_ptr<Buffer> x16 = convert_x(x, n * k, false);
    const int64_t chunk_rows = std::max<int64_t>(
        1, std::min<int64_t>(m, static_cast<int64_t>(kDequantChunkBytes / (sizeof(uint16_t) * k))));
    const std::shared_ptr<Buffer> w16 =
        allocator_->allocate(static_cast<size_t>(chunk_rows * k) * sizeof(uint16_t));
    for (int64_t first = 0; first < m; first += chunk_rows) {
      const int64_t rows = std::min(chunk_rows, m - first);
      gpu::dequantize_to_half(type, w + gpu::weight_row_bytes(type, k) * first, rows, k,
                              reinterpret_cast<gpu_half*>(w16->data()), stream_);
      // Columns [first, first + rows) of out: the same row-major matrix, leading dimension m.
      gemm_16bit(CUDA_R_16F, w16->data(), x16->data(), out + first, n, k, rows, m);
    }
  }

  gpuStream_t stream_;
  std::shared_ptr<gpu::DeviceAllocator> allocator_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace

std::unique_ptr<gpu::Gemm> make_cublas_gemm(gpuStream_t stream,
                                            std::shared_ptr<gpu::DeviceAllocator> allocator) {
  return std::make_unique<CublasGemm>(stream, std::move(allocator));
}

}  // namespace baton::cuda
