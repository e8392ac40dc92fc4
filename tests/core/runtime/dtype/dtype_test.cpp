// Dtype traits of the GGUF weight types and the K-quants' packed sub-block scales, on bytes
// worked out by hand from the layouts in core/runtime/dtype.h.

#include "core/runtime/dtype.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "baton/error.h"

namespace baton {
namespace {

TEST(DType, GgufWeightTypesHaveGgmlCodesBlockSizesAndNames) {
  struct Expected {
    DType dtype;
    uint32_t ggml;
    int64_t block;
    size_t bytes;
    const char* name;
  };
  for (const Expected& e :
       {Expected{DType::kQ4_1, 3, 32, 20, "q4_1"}, Expected{DType::kQ5_0, 6, 32, 22, "q5_0"},
        Expected{DType::kQ5_1, 7, 32, 24, "q5_1"}, Expected{DType::kQ2_K, 10, 256, 84, "q2_K"},
        Expected{DType::kQ3_K, 11, 256, 110, "q3_K"}, Expected{DType::kQ4_K, 12, 256, 144, "q4_K"},
        Expected{DType::kQ5_K, 13, 256, 176, "q5_K"},
        Expected{DType::kQ6_K, 14, 256, 210, "q6_K"}}) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(static_cast<uint32_t>(e.dtype), e.ggml);
    EXPECT_EQ(dtype_from_ggml_type(e.ggml), e.dtype);
    EXPECT_EQ(traits(e.dtype).block_size, e.block);
    EXPECT_EQ(traits(e.dtype).block_bytes, e.bytes);
    EXPECT_EQ(to_string(e.dtype), e.name);
    EXPECT_EQ(ggml_type_name(e.ggml), e.name);
    EXPECT_TRUE(is_quantized(e.dtype));
    EXPECT_EQ(bytes_for(e.dtype, 4 * e.block), 4 * e.bytes);
  }
  EXPECT_FALSE(dtype_from_ggml_type(15));  // q8_K: only an intermediate type in ggml
  EXPECT_THROW(bytes_for(DType::kQ4_K, 64), Error);
}

// Baton's own weight types: codes from 1001 that GGUF files may carry, blocks, and per-row
// headers that make a row's size depend on its length. The KV-cache types 1000 and 1005 are
// never read from files.
TEST(DType, BatonWeightTypesHaveCodesBlocksAndRowHeaders) {
  struct Expected {
    DType dtype;
    uint32_t code;
    int64_t block;
    size_t bytes, header;
    const char* name;
  };
  for (const Expected& e : {Expected{DType::kI8Row, 1001, 32, 32, 4, "int8"},
                            Expected{DType::kI4G32, 1002, 64, 36, 0, "int4_g32"},
                            Expected{DType::kI4G128, 1003, 128, 66, 0, "int4_g128"},
                            Expected{DType::kF8Row, 1004, 32, 32, 4, "fp8"}}) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(dtype_from_ggml_type(e.code), e.dtype);
    EXPECT_EQ(ggml_type_name(e.code), e.name);
    EXPECT_TRUE(is_baton_weight_type(e.dtype));
    EXPECT_EQ(traits(e.dtype).block_size, e.block);
    EXPECT_EQ(traits(e.dtype).block_bytes, e.bytes);
    EXPECT_EQ(row_bytes(e.dtype, 2 * e.block), e.header + 2 * e.bytes);
    EXPECT_EQ(row_bytes(e.dtype, 0), 0u);
  }
  EXPECT_THROW(bytes_for(DType::kI8Row, 64), Error);  // needs the row length
  EXPECT_EQ(row_bytes(DType::kI8Scaled, 7), 11u);     // a scale per row of any length
  EXPECT_FALSE(dtype_from_ggml_type(1000));
  EXPECT_FALSE(dtype_from_ggml_type(1005));
  EXPECT_FALSE(is_baton_weight_type(DType::kI8Scaled));
}

// Scales 1, 2, 3, 4, 17, 34, 51, 63 and mins 0, 1, 2, 3, 16, 33, 48, 62: the last four of each
// need their top two bits from bytes 0..7.
constexpr std::array<uint8_t, 12> kQ4KPacked = {0x41, 0x82, 0xC3, 0xC4, 0x40, 0x81,
                                                0xC2, 0xC3, 0x01, 0x12, 0x03, 0xEF};
constexpr uint8_t kQ4KScales[8] = {1, 2, 3, 4, 17, 34, 51, 63};
constexpr uint8_t kQ4KMins[8] = {0, 1, 2, 3, 16, 33, 48, 62};

TEST(DType, Q4KScalesUnpackAndPackAsLaidOut) {
  uint8_t packed[12];
  std::memcpy(packed, kQ4KPacked.data(), 12);
  const KScalesMins v = unpack_q4_k_scales(packed);
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(v.scale[j], kQ4KScales[j]) << j;
    EXPECT_EQ(v.min[j], kQ4KMins[j]) << j;
  }
  uint8_t repacked[12];
  pack_q4_k_scales(v, repacked);
  EXPECT_EQ(std::memcmp(repacked, packed, 12), 0);
}

// Signed scales 4j - 32 (codes 4j): low nibbles 0, 4, 8, 12 twice per byte pair, top bits
// 0, 1, 2, 3 in each of bytes 8..11.
TEST(DType, Q3KScalesUnpackAndPackAsLaidOut) {
  const uint8_t packed[12] = {0x00, 0x44, 0x88, 0xCC, 0x00, 0x44,
                              0x88, 0xCC, 0xE4, 0xE4, 0xE4, 0xE4};
  int8_t scales[16];
  unpack_q3_k_scales(packed, scales);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(scales[j], 4 * j - 32) << j;
  uint8_t repacked[12];
  pack_q3_k_scales(scales, repacked);
  EXPECT_EQ(std::memcmp(repacked, packed, 12), 0);
}

}  // namespace
}  // namespace baton
