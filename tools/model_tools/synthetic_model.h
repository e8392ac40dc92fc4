#pragma once

// Random-weight models of real architectures' shapes, written as GGUF files that Baton and
// llama.cpp both load, for benchmarking without downloading weights.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/dtype.h"

namespace baton {

struct SyntheticShape {
  // A family's GGUF name (core/formats/family), whose tensors and metadata the file holds.
  std::string architecture = "llama";
  int32_t n_embd = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;  // 0: n_embd / n_head
  int32_t n_ff = 0;
  int32_t n_vocab = 0;
  int32_t n_ctx = 2048;
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_embeddings = false;  // no output.weight: the output projection reuses token_embd
  int32_t sliding_window = 0;    // a windowed family's window; 0: the family's own
  int32_t n_rot = 0;             // rotated dimensions of each head; 0: all
  // When > 1: YaRN scaling by this factor from a trained context of n_ctx / factor.
  float yarn_factor = 0.0f;
  // phi3, when > 0: LongRoPE factors (random, the long ones larger) switching past this context
  int32_t long_rope_original_context = 0;
};

// The shapes `baton synth` knows by name (the families' shapes), comma-separated for help texts
// and errors.
std::string synthetic_shape_names();
// Throws Error(kInvalidArgument) naming the known shapes for any other name.
SyntheticShape synthetic_shape(std::string_view name);

struct SynthOptions {
  SyntheticShape shape;
  std::string name;                 // general.name
  DType weight_type = DType::kF16;  // every matrix; norms and biases stay f32
  // output.weight (token_embd.weight when tied) instead, as a Q4_K_M file keeps it in Q6_K.
  std::optional<DType> output_type;
  std::filesystem::path vocab_from;  // copy tokenizer.* metadata and vocabulary size
  uint64_t seed = 0;
  float weight_std = 0.02f;
  // Every tensor's bytes left zero, as holes of a sparse file: the file describes the shape's
  // tensors and metadata for counting (`baton plan --shape`) and is not a model to run.
  bool layout_only = false;
};

struct SynthSummary {
  int64_t n_params = 0;
  uint64_t weight_bytes = 0;
  int32_t n_vocab = 0;
};

// Writes the model to `path`. Matrices (token_embd and output included, as llama-quantize
// --pure does) are stored as options.weight_type, the output projection as
// options.output_type when set; norm weights are ones and biases small random
// f32. Without vocab_from, the vocabulary is a SentencePiece one of shape.n_vocab tokens:
// <unk> <s> </s>, the 256 byte tokens, then filler pieces. Weights depend only on the seed and
// tensor name, not on the thread count. Throws Error(kInvalidArgument) naming a bad dimension.
SynthSummary write_synthetic_model(const SynthOptions& options, const std::filesystem::path& path);

}  // namespace baton
