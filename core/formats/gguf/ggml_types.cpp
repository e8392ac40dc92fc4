#include "core/formats/gguf/ggml_types.h"

#include <array>

#include "core/runtime/dtype.h"

namespace baton::gguf {
namespace {

constexpr int64_t kQK = 32;     // elements per block of the q4_0 .. q8_1 family
constexpr int64_t kQK_K = 256;  // elements per super-block of the K, IQ and TQ families

// Indexed by ggml_type code (ggml-common.h block structs); {0, 0} marks removed or unused codes.
constexpr std::array<GgmlBlockLayout, 40> kLayouts = {{
    {1, 4},        // f32
    {1, 2},        // f16
    {kQK, 18},     // q4_0
    {kQK, 20},     // q4_1
    {0, 0},        // q4_2 (removed)
    {0, 0},        // q4_3 (removed)
    {kQK, 22},     // q5_0
    {kQK, 24},     // q5_1
    {kQK, 34},     // q8_0
    {kQK, 36},     // q8_1
    {kQK_K, 84},   // q2_K
    {kQK_K, 110},  // q3_K
    {kQK_K, 144},  // q4_K
    {kQK_K, 176},  // q5_K
    {kQK_K, 210},  // q6_K
    {kQK_K, 292},  // q8_K
    {kQK_K, 66},   // iq2_xxs
    {kQK_K, 74},   // iq2_xs
    {kQK_K, 98},   // iq3_xxs
    {kQK_K, 50},   // iq1_s
    {kQK, 18},     // iq4_nl
    {kQK_K, 110},  // iq3_s
    {kQK_K, 82},   // iq2_s
    {kQK_K, 136},  // iq4_xs
    {1, 1},        // i8
    {1, 2},        // i16
    {1, 4},        // i32
    {1, 8},        // i64
    {1, 8},        // f64
    {kQK_K, 56},   // iq1_m
    {1, 2},        // bf16
    {0, 0},        // q4_0_4_4 (removed from GGUF files)
    {0, 0},        // q4_0_4_8 (removed)
    {0, 0},        // q4_0_8_8 (removed)
    {kQK_K, 54},   // tq1_0
    {kQK_K, 66},   // tq2_0
    {0, 0},        // iq4_nl_4_4 (removed)
    {0, 0},        // iq4_nl_4_8 (removed)
    {0, 0},        // iq4_nl_8_8 (removed)
    {kQK, 17},     // mxfp4
}};

}  // namespace

std::optional<GgmlBlockLayout> ggml_block_layout(uint32_t ggml_type) {
  if (const std::optional<DType> dtype = dtype_from_ggml_type(ggml_type);
      dtype && is_baton_weight_type(*dtype)) {
    const DTypeTraits& t = traits(*dtype);
    return GgmlBlockLayout{t.block_size, t.block_bytes, t.row_header_bytes};
  }
  if (ggml_type >= kLayouts.size() || kLayouts[ggml_type].block_size == 0) return std::nullopt;
  return kLayouts[ggml_type];
}

}  // namespace baton::gguf
