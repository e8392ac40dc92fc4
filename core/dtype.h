#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace baton {

// Element types of tensors. Block-quantized types store `block_size` elements in `block_bytes`
// bytes; a row's length must be a multiple of the block size. The numeric values are the GGUF
// (ggml_type) codes so that file data maps onto a dtype without a table.
enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ8_0 = 8,
  kI8 = 24,
  kI32 = 26,
  kBF16 = 30,
};

struct DTypeTraits {
  std::string_view name;
  int64_t block_size;  // elements per block (1 for plain types)
  size_t block_bytes;  // bytes per block
};

const DTypeTraits& traits(DType dtype);
inline std::string_view to_string(DType dtype) {
  return traits(dtype).name;
}

// Maps a GGUF ggml_type code to a dtype Baton implements; nullopt for codes it does not.
std::optional<DType> dtype_from_ggml_type(uint32_t ggml_type);
// Name of any ggml_type code, for error messages about types Baton does not implement.
std::string_view ggml_type_name(uint32_t ggml_type);

// Bytes of `count` elements; `count` must be a multiple of the block size.
size_t bytes_for(DType dtype, int64_t count);
bool is_quantized(DType dtype);

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

}  // namespace baton
