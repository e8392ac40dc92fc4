#pragma once

// Perplexity over a text as llama.cpp's perplexity tool computes it, so figures compare: the
// tokens (BOS added as the tokenizer says) are cut into non-overlapping chunks of n_ctx; each
// chunk starts with BOS in place of its first token (when the model adds one), runs in one causal
// pass from an empty KV cache, and only its second half is scored: positions n_ctx/2 .. n_ctx-2
// predict the tokens after them. Tokens past the last whole chunk are not used.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/api/loaded_model.h"
#include "core/runtime/backend.h"
#include "models/lora/lora_adapter.h"
#include "models/model.h"

namespace baton {

// Shorter chunks leave too few scored tokens per chunk to mean anything.
constexpr int32_t kMinPerplexityContext = 16;

struct PerplexityOptions {
  int32_t n_ctx = 256;  // tokens per chunk
  // Tokens per model step within a chunk (llama.cpp's n_batch): bounds the activations and the
  // logits brought back per step. The result changes only by the rounding of kernels that pick
  // their path by batch size.
  int32_t step_tokens = 512;
  DType kv_dtype = DType::kF32;             // the KV cache's element type (see KvCacheShape)
  std::shared_ptr<const LoraAdapter> lora;  // applied to every token when set
  DType lora_dtype = DType::kF16;           // the element type of its slot (LoraSlots)
};

struct PerplexityResult {
  int32_t n_ctx = 0;
  int64_t n_tokens = 0;  // tokens of the whole text, BOS included
  int32_t n_chunks = 0;
  int64_t n_scored = 0;             // predictions whose negative log-likelihood was summed
  double mean_nll = 0;              // natural log
  double ppl = 0;                   // exp(mean_nll)
  double ppl_error = 0;             // standard error of the mean NLL, propagated through exp
  std::vector<double> running_ppl;  // the estimate after each chunk
};

// Called after each chunk with its 0-based index and the estimate so far.
using PerplexityProgress = std::function<void(int32_t chunk, double running_ppl)>;

// Perplexity of `model` over `tokens`, running on `backend`. `bos` replaces each chunk's first
// token when set. Throws Error(kInvalidArgument) when n_ctx is below kMinPerplexityContext or
// above the model's trained context, step_tokens is not positive, or `tokens` do not fill one
// chunk.
PerplexityResult perplexity(const Model& model, Backend& backend, std::span<const int32_t> tokens,
                            const PerplexityOptions& options, std::optional<int32_t> bos,
                            const PerplexityProgress& progress = {});

// `text` tokenized with the model's special-token rules, then as above with the KV cache dtype
// and LoRA slot dtype `loaded` was opened with, and the adapter of `options`, if any.
PerplexityResult perplexity_of_text(const LoadedModel& loaded, std::string_view text,
                                    const PerplexityOptions& options,
                                    const PerplexityProgress& progress = {});

// The text of `text_file` tokenized with the model's special-token rules, then as above with
// the KV cache dtype and the LoRA adapter (one at most) `loaded` was opened with. Throws
// Error(kInvalidArgument) naming a file that cannot be read.
PerplexityResult perplexity_of_file(const LoadedModel& loaded,
                                    const std::filesystem::path& text_file,
                                    const PerplexityOptions& options,
                                    const PerplexityProgress& progress = {});

}  // namespace baton
