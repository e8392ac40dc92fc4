#include "backends/gpusim/host_gemm.h"

#include <algorithm>
#include <vector>

#include "core/runtime/dtype.h"

namespace gpusim {
namespace {

using baton::gpu::WeightType;

// Weights decoded to f16 per chunk of rows, as the CUDA plugin does (64 MiB there; small here so
// that the chunked path runs in tests of modest size).
constexpr size_t kDequantChunkBytes = size_t{4} << 20;

// cuBLAS's place: out[i * ldc + j] = sum_c x[i, c] * w[j, c], x and w of one element type (f32,
// f16 or bf16, decoded by the dtype table), fp32 sums, queued in the stream's order. It checks
// that it reads written device memory and writes allocated device memory.
void queue_gemm(Stream stream, baton::DType type, const void* w, const void* x, float* out,
                int64_t n, int64_t k, int64_t m, int64_t ldc) {
  GPU_CHECK(enqueue_host_task(stream, "host GEMM", [=] {
    const auto nn = static_cast<size_t>(n), kk = static_cast<size_t>(k);
    const auto mm = static_cast<size_t>(m), ld = static_cast<size_t>(ldc);
    const size_t row_bytes = baton::row_bytes(type, k);
    const baton::DequantizeRow decode = baton::traits(type).dequantize;
    check_device_read(x, nn * row_bytes, "the GEMM's x");
    check_device_read(w, mm * row_bytes, "the GEMM's weights");
    check_device_write(out, ((nn - 1) * ld + mm) * sizeof(float), "the GEMM's out");
    std::vector<float> wj(kk), xs(nn * kk);
    for (size_t i = 0; i < nn; ++i) {
      decode(static_cast<const std::byte*>(x) + i * row_bytes, k, xs.data() + i * kk);
    }
    for (size_t j = 0; j < mm; ++j) {
      decode(static_cast<const std::byte*>(w) + j * row_bytes, k, wj.data());
      for (size_t i = 0; i < nn; ++i) {
        float sum = 0.0f;
        for (size_t c = 0; c < kk; ++c) sum += xs[i * kk + c] * wj[c];
        out[i * ld + j] = sum;
      }
    }
    for (size_t i = 0; i < nn; ++i) mark_device_written(out + i * ld, mm * sizeof(float));
  }));
}

// The CUDA plugin's GEMM with the host GEMM in cuBLAS's place: the same conversions, through
// the same kernels (x to f16/bf16, Q8_0/Q4_0 weights to f16 in chunks of rows), so gpusim runs
// them and the results carry the same roundings.
class HostGemm final : public baton::gpu::Gemm {
 public:
  HostGemm(Stream stream, std::shared_ptr<baton::gpu::DeviceAllocator> allocator)
      : stream_(stream), allocator_(std::move(allocator)) {}

  void multiply(WeightType type, const void* w, const float* x, float* out, int64_t n, int64_t k,
                int64_t m) override {
    switch (type) {
      case WeightType::kF32:
        return queue_gemm(stream_, baton::DType::kF32, w, x, out, n, k, m, m);
      case WeightType::kF16:
      case WeightType::kBF16: {
        const bool bf16 = type == WeightType::kBF16;
        const std::shared_ptr<baton::Buffer> x16 = convert_x(x, n * k, bf16);
        return queue_gemm(stream_, bf16 ? baton::DType::kBF16 : baton::DType::kF16, w, x16->data(),
                          out, n, k, m, m);
      }
      case WeightType::kQ8_0:
      case WeightType::kQ4_0:
        return quantized(type, static_cast<const std::byte*>(w), x, out, n, k, m);
    }
  }

 private:
  // Buffers go back to the allocator's cache when these return; like the CUDA plugin's, they
  // are reused only by later work of the same stream, after the queued GEMM.
  std::shared_ptr<baton::Buffer> convert_x(const float* x, int64_t numel, bool bf16) {
    std::shared_ptr<baton::Buffer> buffer = allocator_->allocate(static_cast<size_t>(numel) * 2);
    if (bf16) {
      baton::gpu::convert_to_bf16(x, reinterpret_cast<gpu_bf16*>(buffer->data()), numel, stream_);
    } else {
      baton::gpu::convert_to_half(x, reinterpret_cast<gpu_half*>(buffer->data()), numel, stream_);
    }
    return buffer;
  }

  void quantized(WeightType type, const std::byte* w, const float* x, float* out, int64_t n,
                 int64_t k, int64_t m) {
    const std::shared_ptr<baton::Buffer> x16 = convert_x(x, n * k, false);
    const int64_t chunk_rows = std::max<int64_t>(
        1, std::min<int64_t>(m, static_cast<int64_t>(kDequantChunkBytes / (sizeof(uint16_t) * k))));
    const std::shared_ptr<baton::Buffer> w16 =
        allocator_->allocate(static_cast<size_t>(chunk_rows * k) * sizeof(uint16_t));
    for (int64_t first = 0; first < m; first += chunk_rows) {
      const int64_t rows = std::min(chunk_rows, m - first);
      baton::gpu::dequantize_to_half(type, w + baton::gpu::weight_row_bytes(type, k) * first, rows,
                                     k, reinterpret_cast<gpu_half*>(w16->data()), stream_);
      queue_gemm(stream_, baton::DType::kF16, w16->data(), x16->data(), out + first, n, k, rows, m);
    }
  }

  Stream stream_;
  std::shared_ptr<baton::gpu::DeviceAllocator> allocator_;
};

}  // namespace

std::unique_ptr<baton::gpu::Gemm> make_host_gemm(
    gpuStream_t stream, std::shared_ptr<baton::gpu::DeviceAllocator> allocator) {
  return std::make_unique<HostGemm>(stream, std::move(allocator));
}

}  // namespace gpusim
