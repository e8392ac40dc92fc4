#pragma once

#include <cstdint>

namespace baton::hf {

// The checkpoint row that holds row `row` of a q or k projection in GGUF order. Hugging Face
// keeps each head's rotary pairs as its two halves (rotate_half: pair i is rows i and
// i + head_dim/2), GGUF llama as adjacent rows 2i and 2i + 1, as llama.cpp's converter permutes
// them.
int64_t rotate_half_source_row(int64_t row, int64_t head_dim);

}  // namespace baton::hf
