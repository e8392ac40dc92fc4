#pragma once

#include <cstdint>
#include <optional>

namespace baton::gguf {

// Storage layout of a ggml_type code: `block_size` elements take `block_bytes` bytes, and each
// row starts with `row_header_bytes` more. Known for every type a GGUF file may hold, including
// those Baton cannot compute with, so that files of any type can be validated and copied.
struct GgmlBlockLayout {
  int64_t block_size;
  uint64_t block_bytes;
  uint64_t row_header_bytes = 0;

  uint64_t row_bytes(int64_t row_length) const {
    return (row_length == 0 ? 0 : row_header_bytes) +
           static_cast<uint64_t>(row_length / block_size) * block_bytes;
  }
};

// nullopt for codes that are neither ggml types nor Baton's own weight types
// (core/runtime/dtype.h), and for types whose support ggml has removed.
std::optional<GgmlBlockLayout> ggml_block_layout(uint32_t ggml_type);

}  // namespace baton::gguf
