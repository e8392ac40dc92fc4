// Matmul for every weight dtype, out[n, m] = x[n, k] * w[m, k]^T with x and out f32:
//   f32 weights      cublasSgemm (fp32 throughout; TF32 stays off, so results do not depend
//                    on the GPU generation);
//   f16 / bf16       x converted to the weight's type on the device, cublasGemmEx with fp32
//                    accumulation and f32 output;
//   q8_0 / q4_0      up to gpu::kGemvMaxRows rows of x (decode): the on-the-fly dequantizing
//                    GEMV; more rows (prefill): the weight decoded to f16 in row chunks, then
//                    cublasGemmEx as above, so prefill runs on tensor cores.
// cuBLAS is column-major: a row-major [rows, cols] matrix is its column-major transpose, so the
// product is computed as out^T[m, n] = w[k, m]^T * x^T[k, n] with leading dimensions k, k, m.

#include <algorithm>
#include <string>

#include "backends/cuda/cuda_context.h"
#include "backends/gpu/kernels/kernels.h"
#include "baton/error.h"

namespace baton::cuda {
namespace {

// Bytes of f16 weights decoded at once for a quantized prefill GEMM: large enough that each
// GEMM is efficient, small enough not to double a big weight's footprint.
constexpr size_t kDequantChunkBytes = size_t{64} << 20;

void gemm_16bit(const Context& ctx, cudaDataType type, const void* w, const void* x, float* out,
                int n, int k, int m, int ldc) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, w, type, k, x,
                            type, k, &beta, out, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

// x as f16 or bf16 in scratch memory that lives as long as the returned buffer.
std::shared_ptr<Buffer> convert_x(const Context& ctx, const Tensor& x, bool bf16) {
  std::shared_ptr<Buffer> buffer = ctx.allocator.allocate(static_cast<size_t>(x.numel()) * 2);
  if (bf16) {
    gpu::convert_to_bf16(x.data<float>(), reinterpret_cast<gpu_bf16*>(buffer->data()), x.numel(),
                         ctx.stream);
  } else {
    gpu::convert_to_half(x.data<float>(), reinterpret_cast<gpu_half*>(buffer->data()), x.numel(),
                         ctx.stream);
  }
  return buffer;
}

void quantized_gemm(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  const gpu::WeightType type =
      w.dtype() == DType::kQ8_0 ? gpu::WeightType::kQ8_0 : gpu::WeightType::kQ4_0;
  if (n <= gpu::kGemvMaxRows) {
    gpu::quantized_gemv(type, w.raw(), x.data<float>(), out.data<float>(), n, k, m, ctx.stream);
    return;
  }
  const std::shared_ptr<Buffer> x16 = convert_x(ctx, x, false);
  const int64_t chunk_rows = std::max<int64_t>(
      1, std::min<int64_t>(m, static_cast<int64_t>(kDequantChunkBytes / (sizeof(uint16_t) * k))));
  const std::shared_ptr<Buffer> w16 =
      ctx.allocator.allocate(static_cast<size_t>(chunk_rows * k) * sizeof(uint16_t));
  for (int64_t first = 0; first < m; first += chunk_rows) {
    const int64_t rows = std::min(chunk_rows, m - first);
    gpu::dequantize_to_half(type, w.raw() + w.row_bytes() * static_cast<size_t>(first), rows, k,
                            reinterpret_cast<gpu_half*>(w16->data()), ctx.stream);
    // Columns [first, first + rows) of out: the same row-major matrix, leading dimension m.
    gemm_16bit(ctx, CUDA_R_16F, w16->data(), x16->data(), out.data<float>() + first,
               static_cast<int>(n), static_cast<int>(k), static_cast<int>(rows),
               static_cast<int>(m));
  }
}

}  // namespace

void matmul(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  if (n == 0 || m == 0) return;
  if (k == 0) {  // an empty sum: cuBLAS would leave out untouched
    GPU_CHECK(gpuMemsetAsync(out.raw(), 0, out.nbytes(), ctx.stream));
    return;
  }
  switch (w.dtype()) {
    case DType::kF32: {
      const float alpha = 1.0f, beta = 0.0f;
      CUBLAS_CHECK(cublasSgemm(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m),
                               static_cast<int>(n), static_cast<int>(k), &alpha, w.data<float>(),
                               static_cast<int>(k), x.data<float>(), static_cast<int>(k), &beta,
                               out.data<float>(), static_cast<int>(m)));
      return;
    }
    case DType::kF16:
    case DType::kBF16: {
      const bool bf16 = w.dtype() == DType::kBF16;
      const std::shared_ptr<Buffer> x16 = convert_x(ctx, x, bf16);
      gemm_16bit(ctx, bf16 ? CUDA_R_16BF : CUDA_R_16F, w.raw(), x16->data(), out.data<float>(),
                 static_cast<int>(n), static_cast<int>(k), static_cast<int>(m),
                 static_cast<int>(m));
      return;
    }
    case DType::kQ8_0:
    case DType::kQ4_0:
      return quantized_gemm(ctx, x, w, out);
    default:
      throw Error(ErrorCategory::kUnsupported,
                  "matmul weights of " + std::string(to_string(w.dtype())));
  }
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(ErrorCategory::kBackend,
                std::string(call) + " failed: " + cublasGetStatusString(status));
  }
}

}  // namespace baton::cuda
