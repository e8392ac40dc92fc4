#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace baton {

// Element types of tensors. Block-quantized types store `block_size` elements in `block_bytes`
// bytes; a row's length must be a multiple of the block size. The numeric values are the GGUF
// (ggml_type) codes so that file data maps onto a dtype without a table.
enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kI8 = 24,
  kI32 = 26,
  kBF16 = 30,
  // Baton's own, outside ggml's range. FP8 E4M3 (core/runtime/fp8.h) is an element type of KV
  // caches, never stored in files.
  kF8E4M3 = 1000,
  // Baton's own weight types (docs/quantization.md). GGUF files Baton writes store them under
  // these codes; llama.cpp does not read such files.
  //
  // int8 per output channel: a row is its f32 scale, then one int8 quant per element;
  // value = scale * q.
  kI8Row = 1001,
  // int4 in groups of 32 or 128 elements, blocks of 64 (g32) or 128 (g128) elements: the
  // block's fp16 group scales d (two or one), then its 4-bit quants in chunks of 64 elements
  // (32 bytes): byte i of a chunk holds chunk element i in its low nibble and element 32 + i in
  // its high nibble; value = d[group] * (q - 8).
  kI4G32 = 1002,
  kI4G128 = 1003,
  // FP8 E4M3 per output channel: a row is its f32 scale, then one E4M3 byte per element;
  // value = scale * e4m3(q).
  kF8Row = 1004,
  // int8 with one f32 scale per row of any length, a row being the tensor's innermost dimension:
  // the int8 KV cache, where a row is one head's K or V. Laid out as kI8Row; never in files.
  kI8Scaled = 1005,
};

// A row codec: `n` floats written as one row of a dtype (a whole number of blocks; for types
// with row headers, a whole row), and `n` elements of such a row read back.
using QuantizeRow = void (*)(const float* x, std::byte* out, int64_t n);
using DequantizeRow = void (*)(const std::byte* row, int64_t n, float* out);

// One entry of the dtype table (core/runtime/dtype.cpp), as ggml's type traits: everything that
// code outside the kernels needs to know of a type. Adding a type is a layout here, an entry there,
// its encoder (core/runtime/quantize/quantize*.cpp) and decoder
// (core/runtime/quantize/dequantize*.cpp).
struct DTypeTraits {
  std::string_view name;
  int64_t block_size;                  // elements per block (1 for plain types)
  size_t block_bytes;                  // bytes per block
  size_t row_header_bytes = 0;         // bytes before each row's blocks (per-row scales)
  QuantizeRow quantize = nullptr;      // null: no values to encode (i8, i32)
  DequantizeRow dequantize = nullptr;  // null: no values to decode (i8, i32)
};

const DTypeTraits& traits(DType dtype);
inline std::string_view to_string(DType dtype) {
  return traits(dtype).name;
}

// Maps a GGUF ggml_type code to a dtype Baton implements; nullopt for codes it does not.
std::optional<DType> dtype_from_ggml_type(uint32_t ggml_type);
// Name of any ggml_type code, for error messages about types Baton does not implement.
std::string_view ggml_type_name(uint32_t ggml_type);

// Bytes of `count` elements; `count` must be a multiple of the block size. Not for types with
// row headers, whose size depends on the row length: use row_bytes.
size_t bytes_for(DType dtype, int64_t count);
// Bytes of one row of `row_length` elements, header included (an empty row has none).
size_t row_bytes(DType dtype, int64_t row_length);
bool is_quantized(DType dtype);
// Baton's own weight types (kI8Row .. kF8Row).
bool is_baton_weight_type(DType dtype);
// The element types a KV cache may have. Here rather than beside the cache, so that backends and
// reference kernels can check a cache tensor.
inline constexpr DType kKvCacheDtypes[] = {DType::kF32,  DType::kF16,      DType::kBF16,
                                           DType::kQ8_0, DType::kI8Scaled, DType::kF8E4M3};
bool is_kv_cache_dtype(DType dtype);
// "f32, f16, bf16, q8_0, int8_scaled or fp8_e4m3": kKvCacheDtypes by name, for error messages.
std::string kv_cache_dtype_names();

// int4 geometry (kI4G32, kI4G128): elements per group sharing one scale, groups per block,
// elements and bytes per block.
constexpr int64_t kInt4Chunk = 64;  // elements per 32-byte chunk of quants
constexpr int64_t int4_group_size(DType dtype) {
  return dtype == DType::kI4G32 ? 32 : 128;
}
constexpr int64_t int4_block_groups(DType dtype) {
  return dtype == DType::kI4G32 ? 2 : 1;
}
constexpr int64_t int4_block_size(DType dtype) {
  return dtype == DType::kI4G32 ? kInt4Chunk : 2 * kInt4Chunk;
}
constexpr size_t int4_block_bytes(DType dtype) {
  return static_cast<size_t>(2 * int4_block_groups(dtype) + int4_block_size(dtype) / 2);
}
// Where the 32 elements from element 32 * b of an int4 row lie: the fp16 scale of their group
// (for int4_g32 with b even, the next group's follows it), and the 32-byte chunk whose low (b
// even) or high (b odd) nibbles hold them.
struct Int4Place {
  const uint16_t* scale;
  const std::byte* chunk;
  bool high;
};
inline Int4Place int4_place(DType dtype, const std::byte* row, int64_t b) {
  const int64_t element = 32 * b, block = int4_block_size(dtype);
  const auto* scales = reinterpret_cast<const uint16_t*>(
      row + static_cast<size_t>(element / block) * int4_block_bytes(dtype));
  const int64_t within = element % block;
  const auto* chunks = reinterpret_cast<const std::byte*>(scales + int4_block_groups(dtype));
  return {scales + within / int4_group_size(dtype), chunks + within / kInt4Chunk * 32,
          within % kInt4Chunk != 0};
}

// GGUF block layouts (ggml-common.h): a scale d as fp16 followed by the quants.
constexpr int64_t kQK8_0 = 32;
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK8_0];  // value = d * qs[i]
};
static_assert(sizeof(BlockQ8_0) == 34);

constexpr int64_t kQK4_0 = 32;
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK4_0 / 2];  // element i < 16 in the low nibble of qs[i], element i + 16 in its high
                           // nibble; value = d * (nibble - 8)
};
static_assert(sizeof(BlockQ4_0) == 18);

// The other 32-element blocks. "_1" types add a minimum m: value = d * q + m.
constexpr int64_t kQK4_1 = 32;
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[kQK4_1 / 2];  // nibbles as in Q4_0; value = d * nibble + m
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5: the four low bits as Q4_0's nibbles, the fifth bit of element i in bit i of qh (a
// little-endian uint32).
constexpr int64_t kQK5_0 = 32;
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK5_0 / 2];  // value = d * (q - 16)
};
static_assert(sizeof(BlockQ5_0) == 22);

constexpr int64_t kQK5_1 = 32;
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kQK5_1 / 2];  // value = d * q + m
};
static_assert(sizeof(BlockQ5_1) == 24);

// K-quants: super-blocks of 256 elements split into sub-blocks of 16 or 32, each with its own
// small integer scale (and min), which the fp16 super-block scales d (and dmin) multiply.
constexpr int64_t kQK_K = 256;

// 16 sub-blocks of 16. scales[j]: low nibble the scale, high nibble the min of sub-block j.
// Element e sits in byte qs[32 * (e / 128) + e % 32] at bit 2 * ((e % 128) / 32);
// value = d * (scales[e / 16] & 15) * q - dmin * (scales[e / 16] >> 4).
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d, dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// 16 sub-blocks of 16, signed 6-bit scales (q3_k_scales). The two low bits of element e are
// placed as in Q2_K; its third bit is bit (e / 32) of hmask[e % 32];
// value = d * (scale[e / 16] - 32) * (q - 4).
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// 8 sub-blocks of 32 with 6-bit scales and mins (q4_k_scales). Sub-block s takes the low
// nibbles (s even) or high nibbles (s odd) of qs[32 * (s / 2) .. + 31];
// value = d * scale[s] * q - dmin * min[s].
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q4_K plus a fifth bit: bit s of qh[e % 32] for element e of sub-block s.
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// 16 sub-blocks of 16 with int8 scales. Within each half h = e / 128 (i = e % 128), the low
// four bits of element e are the low (i < 64) or high (i >= 64) nibble of ql[64 * h + i % 64],
// its two high bits are bits 2 * (i / 32) of qh[32 * h + i % 32];
// value = d * scales[e / 16] * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// Q4_K and Q5_K pack 8 six-bit scales and 8 six-bit mins into 12 bytes: for j < 4, scale j and
// min j are the low 6 bits of bytes j and j + 4; for j >= 4 their low 4 bits are the low and
// high nibbles of byte j + 4, and their top 2 bits the top 2 bits of bytes j - 4 and j.
inline uint8_t q4_k_scale(const uint8_t (&packed)[12], int j) {
  return static_cast<uint8_t>(j < 4 ? packed[j] & 63
                                    : (packed[j + 4] & 15) | (packed[j - 4] >> 6) << 4);
}
inline uint8_t q4_k_min(const uint8_t (&packed)[12], int j) {
  return static_cast<uint8_t>(j < 4 ? packed[j + 4] & 63
                                    : (packed[j + 4] >> 4) | (packed[j] >> 6) << 4);
}
struct KScalesMins {
  uint8_t scale[8], min[8];
};
KScalesMins unpack_q4_k_scales(const uint8_t (&packed)[12]);
// Values must be below 64.
void pack_q4_k_scales(const KScalesMins& values, uint8_t (&packed)[12]);

// Q3_K packs 16 six-bit scales (stored as scale + 32) into 12 bytes: the low 4 bits of scale j
// are the low (j < 8) or high (j >= 8) nibble of byte j % 8, the top 2 bits are bits
// 2 * (j / 4) of byte 8 + j % 4. Unpacked values are the signed scales, -32..31.
inline int8_t q3_k_scale(const uint8_t (&packed)[12], int j) {
  const int low = j < 8 ? packed[j] & 15 : packed[j - 8] >> 4;
  const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
  return static_cast<int8_t>((low | high << 4) - 32);
}
void unpack_q3_k_scales(const uint8_t (&packed)[12], int8_t (&scales)[16]);
void pack_q3_k_scales(const int8_t (&scales)[16], uint8_t (&packed)[12]);

}  // namespace baton
