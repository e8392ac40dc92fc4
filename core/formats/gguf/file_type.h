#pragma once

#include <cstdint>

#include "core/runtime/dtype.h"

namespace baton::gguf {

// general.file_type (llama.h's llama_ftype) of a file whose weight matrices all have `dtype`.
// A plain K-quant is labelled as its "_S" mix, the nearest one: llama.cpp has no code for a file
// of one K-quant type throughout. Baton's own weight types have no llama_ftype; their files are
// labelled with the type's code.
constexpr uint32_t llama_file_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 0;
    case DType::kF16:
      return 1;
    case DType::kQ4_0:
      return 2;
    case DType::kQ4_1:
      return 3;
    case DType::kQ8_0:
      return 7;
    case DType::kQ5_0:
      return 8;
    case DType::kQ5_1:
      return 9;
    case DType::kQ2_K:
      return 10;
    case DType::kQ3_K:
      return 11;
    case DType::kQ4_K:
      return 14;
    case DType::kQ5_K:
      return 16;
    case DType::kQ6_K:
      return 18;
    case DType::kBF16:
      return 32;
    default:
      return static_cast<uint32_t>(dtype);
  }
}

// llama_ftype of the "_M" K-quant mixes (more bits for some attn_v and ffn_down matrices).
constexpr uint32_t kLlamaFileTypeQ4_K_M = 15;
constexpr uint32_t kLlamaFileTypeQ5_K_M = 17;

}  // namespace baton::gguf
