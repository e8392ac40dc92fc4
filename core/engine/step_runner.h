#pragma once

#include <vector>

#include "core/backend.h"
#include "core/kv_cache/paged_kv_cache.h"
#include "models/model.h"

namespace baton {

// Builds one step's graph, runs it on the backend and brings the logits back to the host:
// logit_rows.size() rows of n_vocab floats, in the order of input.logit_rows.
std::vector<float> run_step(const Model& model, Backend& backend, const PagedKvCache& cache,
                            const StepInput& input);

}  // namespace baton
