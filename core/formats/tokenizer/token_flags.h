#pragma once

#include <cstdint>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"

namespace baton {

// The TokenFlag bits of every token of `vocabulary` (whose tokens and types are read): from the
// flag keys when the file has any of them, else from llama.cpp's rules by general.name,
// tokenizer.ggml.pre and general.architecture. Empty when no token has a flag. Throws
// Error(kInvalidModel) naming a flag key that is not a list of token ids.
std::vector<uint8_t> read_token_flags(const gguf::GgufFile& file, const Vocabulary& vocabulary);

}  // namespace baton
