// Reference decoders of Baton's own weight types, element by element from core/runtime/dtype.h.

#include <cstring>

#include "core/runtime/dtype.h"
#include "core/runtime/fp8.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/dequantize.h"

namespace baton {
namespace {

float row_scale(const std::byte* row) {
  float scale = 0.0f;
  std::memcpy(&scale, row, sizeof(scale));
  return scale;
}

}  // namespace

void dequantize_int8(const std::byte* row, int64_t n, float* out) {
  const float scale = row_scale(row);
  const auto* q = reinterpret_cast<const int8_t*>(row + sizeof(float));
  for (int64_t i = 0; i < n; ++i) out[i] = scale * static_cast<float>(q[i]);
}

void dequantize_fp8(const std::byte* row, int64_t n, float* out) {
  const float scale = row_scale(row);
  const auto* q = reinterpret_cast<const uint8_t*>(row + sizeof(float));
  for (int64_t i = 0; i < n; ++i) out[i] = scale * fp8_e4m3_to_fp32(q[i]);
}

void dequantize_int4(DType dtype, const std::byte* row, int64_t n, float* out) {
  const DTypeTraits& t = traits(dtype);
  const int64_t group = int4_group_size(dtype), groups = int4_block_groups(dtype);
  for (int64_t e = 0; e < n; ++e) {
    const std::byte* block = row + e / t.block_size * t.block_bytes;
    const int64_t o = e % t.block_size;  // element within the block
    uint16_t d = 0;
    std::memcpy(&d, block + sizeof(uint16_t) * (o / group), sizeof(d));
    const int64_t chunk = o / 64, in_chunk = o % 64;
    const auto byte =
        static_cast<uint8_t>(block[sizeof(uint16_t) * groups + chunk * 32 + in_chunk % 32]);
    const int q = in_chunk < 32 ? byte & 15 : byte >> 4;
    out[e] = fp16_to_fp32(d) * static_cast<float>(q - 8);
  }
}

}  // namespace baton
