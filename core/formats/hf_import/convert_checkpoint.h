#pragma once

// `baton convert`: a Hugging Face Llama, Mistral, Qwen2, Phi-3 or Gemma 2 checkpoint directory
// (config.json, safetensors weights, and a SentencePiece tokenizer.model or a tokenizer.json,
// byte-level or SentencePiece-style) written as a GGUF file that Baton and llama.cpp load, with
// the metadata, tensor names and q/k row order llama.cpp's convert_hf_to_gguf.py writes, except
// that a Mistral or Phi-3 sliding window narrower than max_position_embeddings becomes the context
// length, Gemma 2's query_pre_attn_scalar is also written (as gemma2.attention.scale), and a
// SentencePiece-style tokenizer.json gets merge-rank scores (hf_vocab.h).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/runtime/dtype.h"

namespace baton::hf {

struct ConvertOptions {
  // Matrices: F32, F16 or BF16; none: the checkpoint's own torch_dtype. 1-D tensors (norms)
  // stay F32.
  std::optional<DType> out_type = DType::kF16;
  std::string name;  // general.name; empty: the directory's name
};

struct ConvertSummary {
  int32_t n_tensors = 0;
  int64_t n_params = 0;
  int32_t n_vocab = 0;
  bool tied_embeddings = false;  // no output.weight written
  uint64_t file_bytes = 0;
};

// The checkpoint directory's own name ("Llama-2-7b-hf" for "models/Llama-2-7b-hf/"): the
// default general.name.
std::string directory_name(const std::filesystem::path& dir);

// Writes `dir`'s model to `output` one tensor at a time (through a temporary file renamed into
// place, so a failure leaves no partial output). Everything but the weights' bytes is read and
// checked before writing starts. Throws Error(kInvalidArgument) when `dir` is not a directory
// or out_type is not F32, F16 or BF16; Error(kInvalidModel) naming the directory when it has no
// config.json; and the errors of read_llama_config, read_vocab,
// CheckpointWeights::open, map_llama_tensors and GgufWriter::write.
ConvertSummary convert_checkpoint(const std::filesystem::path& dir,
                                  const std::filesystem::path& output,
                                  const ConvertOptions& options = {});

}  // namespace baton::hf
