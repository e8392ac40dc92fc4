#pragma once

#include <cstdint>
#include <optional>

namespace baton::gguf {

// Storage layout of a ggml_type code: `block_size` elements take `block_bytes` bytes. Known for
// every type a GGUF file may hold, including those Baton cannot compute with, so that files of
// any type can be validated and copied.
struct GgmlBlockLayout {
  int64_t block_size;
  uint64_t block_bytes;
};

// nullopt for codes that are not ggml types or whose support ggml has removed.
std::optional<GgmlBlockLayout> ggml_block_layout(uint32_t ggml_type);

}  // namespace baton::gguf
