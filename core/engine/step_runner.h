#pragma once

#include <span>
#include <vector>

#include "core/backend.h"
#include "core/kv_cache/paged_kv_cache.h"
#include "models/model.h"

namespace baton {

// Builds one step's graph, runs it on the backend and brings the logits back to the host:
// logit_rows.size() rows of n_vocab floats, in the order of input.logit_rows.
std::vector<float> run_step(const Model& model, Backend& backend, const PagedKvCache& cache,
                            const StepInput& input);

// One sequence that owns a whole cache, blocks in order, so it needs no block manager: what
// the benchmark and perplexity run outside the engine. A new SoloSequence on the same cache
// starts again at position 0 and overwrites the old K/V.
class SoloSequence {
 public:
  // `context_size` is the context the model is told it runs in (StepInput::context_size, which
  // picks LongRoPE's factors); 0 means the cache's capacity.
  SoloSequence(const Model& model, Backend& backend, const PagedKvCache& cache,
               int32_t context_size = 0);

  // Appends `tokens` and returns the logits of the tokens at `logit_rows` (indices into
  // `tokens`), logit_rows.size() rows of n_vocab floats.
  std::vector<float> step(std::span<const int32_t> tokens, std::vector<int32_t> logit_rows);

 private:
  const Model& model_;
  Backend& backend_;
  const PagedKvCache& cache_;
  std::vector<int32_t> blocks_;
  int32_t context_size_;
  int32_t length_ = 0;
};

}  // namespace baton
