#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/backend.h"

namespace baton {

// Looks tensors up by their llama.cpp names and checks their shapes against the config, so a
// bad file fails at load with the tensor's name rather than later inside a kernel.
// The vocabulary tables: input embeddings, the final norm and the output projection.
struct EmbeddingWeights {
  Tensor token_embd, output_norm, output;
};

// The part of a 2-D weight [rows, columns] a tensor-parallel rank holds: rows [first,
// first + count) (a column-parallel weight's output features; a 1-D bias is cut the same way)
// or columns (a row-parallel weight's input features).
struct WeightSlice {
  enum class Axis { kRows, kColumns } axis = Axis::kRows;
  int64_t first = 0, count = 0;
};

class WeightLoader {
 public:
  WeightLoader(const gguf::GgufFile& file, Backend& backend) : file_(file), backend_(backend) {}

  // The tensor on the backend, only `slice` of it when given; Error(kInvalidModel) naming it when
  // absent or misshapen, Error(kUnsupported) when a column cut would split a quantization block
  // (columns are copied, rows stay views of the file).
  Tensor get(const std::string& name, const Shape& expected,
             const std::optional<WeightSlice>& slice = std::nullopt) const;
  // As get(), and Error(kUnsupported) unless it is f32 (norms and biases).
  Tensor get_f32(const std::string& name, const Shape& expected,
                 const std::optional<WeightSlice>& slice = std::nullopt) const;
  // Rows [first, first + count) of a tensor of shape `expected` that fuses several weights
  // (phi3's attn_qkv), as a weight of its own; only `rows` of those when given (a row slice,
  // counted from `first`).
  Tensor get_rows(const std::string& name, const Shape& expected, int64_t first, int64_t count,
                  const std::optional<WeightSlice>& rows = std::nullopt) const;
  // The values of a small f32 vector the file may hold ([n]; rope frequency factors), read on the
  // host because they become op parameters; nullopt when absent, Error(kInvalidModel) when it
  // is not f32 [n].
  std::optional<std::vector<float>> find_host_f32(const std::string& name, int64_t n) const;
  // token_embd, output_norm and output.weight; token_embd again when the file has no
  // output.weight (tied embeddings, as in stories260K's llama2.c export and Qwen2-0.5B).
  // `output_rows`: the rows of the output projection a tensor-parallel rank holds.
  EmbeddingWeights embeddings(int64_t n_vocab, int64_t n_embd,
                              const std::optional<WeightSlice>& output_rows = std::nullopt) const;
  // A tensor the file must hold as 2-D: its shape, to size the model by.
  Shape shape_2d(const std::string& name) const;

  const gguf::GgufFile& file() const { return file_; }

 private:
  const gguf::GgufFile& file_;
  Backend& backend_;
};

}  // namespace baton
