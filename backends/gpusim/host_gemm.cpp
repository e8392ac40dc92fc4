#include "backends/gpusim/host_gemm.h"

#include <vector>

#include "core/dtype.h"

namespace gpusim {
namespace {

using baton::gpu::WeightType;

baton::DType dtype_of(WeightType type) {
  switch (type) {
    case WeightType::kF32:
      return baton::DType::kF32;
    case WeightType::kF16:
      return baton::DType::kF16;
    case WeightType::kBF16:
      return baton::DType::kBF16;
    case WeightType::kQ8_0:
      return baton::DType::kQ8_0;
    case WeightType::kQ4_0:
      return baton::DType::kQ4_0;
  }
  return baton::DType::kF32;
}

class HostGemm final : public baton::gpu::Gemm {
 public:
  explicit HostGemm(gpuStream_t stream) : stream_(stream) {}

  // Weights decoded exactly (the dtype table's decoder) and fp32 sums: the bound the tests
  // derive for cuBLAS's f16 inputs holds with room to spare.
  void multiply(WeightType type, const void* w, const float* x, float* out, int64_t n, int64_t k,
                int64_t m) override {
    const auto row_bytes = static_cast<size_t>(baton::gpu::weight_row_bytes(type, k));
    const auto nn = static_cast<size_t>(n), kk = static_cast<size_t>(k),
               mm = static_cast<size_t>(m);
    GPU_CHECK(enqueue_host_task(stream_, "host GEMM", [=] {
      check_device_read(x, nn * kk * sizeof(float), "the GEMM's x");
      check_device_read(w, mm * row_bytes, "the GEMM's weights");
      const baton::DequantizeRow decode = baton::traits(dtype_of(type)).dequantize;
      std::vector<float> row(kk);
      for (size_t j = 0; j < mm; ++j) {
        decode(static_cast<const std::byte*>(w) + j * row_bytes, k, row.data());
        for (size_t i = 0; i < nn; ++i) {
          const float* xi = x + i * kk;
          float sum = 0.0f;
          for (size_t c = 0; c < kk; ++c) sum += xi[c] * row[c];
          out[i * mm + j] = sum;
        }
      }
      mark_device_written(out, nn * mm * sizeof(float));
    }));
  }

 private:
  gpuStream_t stream_;
};

}  // namespace

std::unique_ptr<baton::gpu::Gemm> make_host_gemm(gpuStream_t stream) {
  return std::make_unique<HostGemm>(stream);
}

}  // namespace gpusim
