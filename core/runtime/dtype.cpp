#include "core/runtime/dtype.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <string>

#include "baton/error.h"
#include "core/runtime/fp8.h"
#include "core/runtime/quantize/dequantize.h"
#include "core/runtime/quantize/quantize.h"

namespace baton {
namespace {

constexpr std::array<std::string_view, 40> kGgmlTypeNames = {"f32",
                                                             "f16",
                                                             "q4_0",
                                                             "q4_1",
                                                             "q4_2 (removed)",
                                                             "q4_3 (removed)",
                                                             "q5_0",
                                                             "q5_1",
                                                             "q8_0",
                                                             "q8_1",
                                                             "q2_K",
                                                             "q3_K",
                                                             "q4_K",
                                                             "q5_K",
                                                             "q6_K",
                                                             "q8_K",
                                                             "iq2_xxs",
                                                             "iq2_xs",
                                                             "iq3_xxs",
                                                             "iq1_s",
                                                             "iq4_nl",
                                                             "iq3_s",
                                                             "iq2_s",
                                                             "iq4_xs",
                                                             "i8",
                                                             "i16",
                                                             "i32",
                                                             "i64",
                                                             "f64",
                                                             "iq1_m",
                                                             "bf16",
                                                             "q4_0_4_4",
                                                             "q4_0_4_8",
                                                             "q4_0_8_8",
                                                             "tq1_0",
                                                             "tq2_0",
                                                             "iq4_nl_4_4",
                                                             "iq4_nl_4_8",
                                                             "iq4_nl_8_8",
                                                             "mxfp4"};

size_t bytes_for_blocks(const DTypeTraits& t, int64_t count) {
  if (count % t.block_size != 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                std::to_string(count) + " elements is not a whole number of " +
                    std::string(t.name) + " blocks of " + std::to_string(t.block_size));
  }
  return static_cast<size_t>(count / t.block_size) * t.block_bytes;
}

// Casts a codec written for its own block type to the table's byte-level signature.
template <class Block, void (*Encode)(const float*, Block*, int64_t)>
void encode_blocks(const float* x, std::byte* out, int64_t n) {
  Encode(x, reinterpret_cast<Block*>(out), n);
}
template <void (*Encode)(const float*, uint16_t*, int64_t)>
void encode_halves(const float* x, std::byte* out, int64_t n) {
  Encode(x, reinterpret_cast<uint16_t*>(out), n);
}
template <DType kType>
void encode_int4(const float* x, std::byte* out, int64_t n) {
  quantize_row_int4(kType, x, out, n);
}
template <DType kType>
void decode_int4(const std::byte* row, int64_t n, float* out) {
  dequantize_int4(kType, row, n, out);
}
void encode_f32(const float* x, std::byte* out, int64_t n) {
  std::memcpy(out, x, static_cast<size_t>(n) * sizeof(float));
}
void encode_fp8_e4m3(const float* x, std::byte* out, int64_t n) {
  auto* p = reinterpret_cast<uint8_t*>(out);
  for (int64_t i = 0; i < n; ++i) p[i] = fp32_to_fp8_e4m3(x[i]);
}

struct DTypeEntry {
  DType dtype;
  DTypeTraits traits;
};

// The dtype table.
const std::array<DTypeEntry, 21> kDTypes = {{
    {DType::kF32, {"f32", 1, 4, 0, encode_f32, dequantize_f32}},
    {DType::kF16, {"f16", 1, 2, 0, encode_halves<convert_row_f16>, dequantize_f16}},
    {DType::kBF16, {"bf16", 1, 2, 0, encode_halves<convert_row_bf16>, dequantize_bf16}},
    {DType::kF8E4M3, {"fp8_e4m3", 1, 1, 0, encode_fp8_e4m3, dequantize_fp8_e4m3}},
    {DType::kI8, {"i8", 1, 1}},
    {DType::kI32, {"i32", 1, 4}},
    {DType::kQ8_0,
     {"q8_0", kQK8_0, sizeof(BlockQ8_0), 0, encode_blocks<BlockQ8_0, quantize_row_q8_0>,
      dequantize_q8_0}},
    {DType::kQ4_0,
     {"q4_0", kQK4_0, sizeof(BlockQ4_0), 0, encode_blocks<BlockQ4_0, quantize_row_q4_0>,
      dequantize_q4_0}},
    {DType::kQ4_1,
     {"q4_1", kQK4_1, sizeof(BlockQ4_1), 0, encode_blocks<BlockQ4_1, quantize_row_q4_1>,
      dequantize_q4_1}},
    {DType::kQ5_0,
     {"q5_0", kQK5_0, sizeof(BlockQ5_0), 0, encode_blocks<BlockQ5_0, quantize_row_q5_0>,
      dequantize_q5_0}},
    {DType::kQ5_1,
     {"q5_1", kQK5_1, sizeof(BlockQ5_1), 0, encode_blocks<BlockQ5_1, quantize_row_q5_1>,
      dequantize_q5_1}},
    {DType::kQ2_K,
     {"q2_K", kQK_K, sizeof(BlockQ2_K), 0, encode_blocks<BlockQ2_K, quantize_row_q2_k>,
      dequantize_q2_k}},
    {DType::kQ3_K,
     {"q3_K", kQK_K, sizeof(BlockQ3_K), 0, encode_blocks<BlockQ3_K, quantize_row_q3_k>,
      dequantize_q3_k}},
    {DType::kQ4_K,
     {"q4_K", kQK_K, sizeof(BlockQ4_K), 0, encode_blocks<BlockQ4_K, quantize_row_q4_k>,
      dequantize_q4_k}},
    {DType::kQ5_K,
     {"q5_K", kQK_K, sizeof(BlockQ5_K), 0, encode_blocks<BlockQ5_K, quantize_row_q5_k>,
      dequantize_q5_k}},
    {DType::kQ6_K,
     {"q6_K", kQK_K, sizeof(BlockQ6_K), 0, encode_blocks<BlockQ6_K, quantize_row_q6_k>,
      dequantize_q6_k}},
    {DType::kI8Row, {"int8", 32, 32, sizeof(float), quantize_row_int8, dequantize_int8}},
    {DType::kI4G32,
     {"int4_g32", int4_block_size(DType::kI4G32), int4_block_bytes(DType::kI4G32), 0,
      encode_int4<DType::kI4G32>, decode_int4<DType::kI4G32>}},
    {DType::kI4G128,
     {"int4_g128", int4_block_size(DType::kI4G128), int4_block_bytes(DType::kI4G128), 0,
      encode_int4<DType::kI4G128>, decode_int4<DType::kI4G128>}},
    {DType::kF8Row, {"fp8", 32, 32, sizeof(float), quantize_row_fp8, dequantize_fp8}},
    {DType::kI8Scaled,
     {"int8_scaled", 1, 1, sizeof(float), quantize_row_int8_scaled, dequantize_int8}},
}};

}  // namespace

const DTypeTraits& traits(DType dtype) {
  for (const DTypeEntry& entry : kDTypes) {
    if (entry.dtype == dtype) return entry.traits;
  }
  throw Error(ErrorCategory::kInternal,
              "unknown dtype code " + std::to_string(static_cast<uint32_t>(dtype)));
}

std::optional<DType> dtype_from_ggml_type(uint32_t ggml_type) {
  switch (static_cast<DType>(ggml_type)) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kI8:
    case DType::kI32:
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kI8Row:
    case DType::kI4G32:
    case DType::kI4G128:
    case DType::kF8Row:
      return static_cast<DType>(ggml_type);
    case DType::kF8E4M3:  // never in files
    case DType::kI8Scaled:
      break;
  }
  return std::nullopt;
}

std::string_view ggml_type_name(uint32_t ggml_type) {
  if (ggml_type < kGgmlTypeNames.size()) return kGgmlTypeNames[ggml_type];
  const std::optional<DType> dtype = dtype_from_ggml_type(ggml_type);
  return dtype ? to_string(*dtype) : "unknown";
}

bool is_baton_weight_type(DType dtype) {
  return dtype == DType::kI8Row || dtype == DType::kI4G32 || dtype == DType::kI4G128 ||
         dtype == DType::kF8Row;
}

bool is_kv_cache_dtype(DType dtype) {
  return std::find(std::begin(kKvCacheDtypes), std::end(kKvCacheDtypes), dtype) !=
         std::end(kKvCacheDtypes);
}

std::string kv_cache_dtype_names() {
  std::string names;
  const size_t count = std::size(kKvCacheDtypes);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) names += i + 1 == count ? " or " : ", ";
    names += to_string(kKvCacheDtypes[i]);
  }
  return names;
}

size_t row_bytes(DType dtype, int64_t row_length) {
  const DTypeTraits& t = traits(dtype);
  return (row_length == 0 ? 0 : t.row_header_bytes) + bytes_for_blocks(t, row_length);
}

size_t bytes_for(DType dtype, int64_t count) {
  const DTypeTraits& t = traits(dtype);
  if (t.row_header_bytes != 0) {
    throw Error(ErrorCategory::kInternal,
                std::string(t.name) + " sizes depend on the row length; use row_bytes");
  }
  return bytes_for_blocks(t, count);
}

bool is_quantized(DType dtype) {
  return traits(dtype).block_size > 1;
}

KScalesMins unpack_q4_k_scales(const uint8_t (&packed)[12]) {
  KScalesMins v;
  for (int j = 0; j < 8; ++j) {
    v.scale[j] = q4_k_scale(packed, j);
    v.min[j] = q4_k_min(packed, j);
  }
  return v;
}

void pack_q4_k_scales(const KScalesMins& v, uint8_t (&packed)[12]) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>((v.scale[j] & 63) | (v.scale[j + 4] >> 4) << 6);
    packed[j + 4] = static_cast<uint8_t>((v.min[j] & 63) | (v.min[j + 4] >> 4) << 6);
    packed[j + 8] = static_cast<uint8_t>((v.scale[j + 4] & 15) | (v.min[j + 4] & 15) << 4);
  }
}

void unpack_q3_k_scales(const uint8_t (&packed)[12], int8_t (&scales)[16]) {
  for (int j = 0; j < 16; ++j) scales[j] = q3_k_scale(packed, j);
}

void pack_q3_k_scales(const int8_t (&scales)[16], uint8_t (&packed)[12]) {
  for (uint8_t& b : packed) b = 0;
  for (int j = 0; j < 16; ++j) {
    const int u = scales[j] + 32;  // 0..63
    packed[j % 8] |= static_cast<uint8_t>((u & 15) << (j < 8 ? 0 : 4));
    packed[8 + j % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (j / 4)));
  }
}

}  // namespace baton
