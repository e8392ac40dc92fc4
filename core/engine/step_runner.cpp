#include "core/engine/step_runner.h"

#include "baton/error.h"

namespace baton {

std::vector<float> run_step(const Model& model, Backend& backend, const PagedKvCache& cache,
                            const StepInput& input) {
  Graph graph([&backend](DType dtype, Shape shape) {
    return backend.allocate_tensor(dtype, std::move(shape));
  });
  const Tensor logits = model.build_step(graph, input, cache.tensors());
  graph.set_outputs({logits});
  backend.execute(graph);
  std::vector<float> host(static_cast<size_t>(logits.numel()));
  backend.download(host.data(), logits, host.size() * sizeof(float));
  return host;
}

SoloSequence::SoloSequence(const Model& model, Backend& backend, const PagedKvCache& cache,
                           int32_t context_size)
    : model_(model),
      backend_(backend),
      cache_(cache),
      context_size_(context_size > 0 ? context_size
                                     : cache.shape().n_blocks * cache.shape().block_size) {
  for (int32_t b = 0; b < cache.shape().n_blocks; ++b) blocks_.push_back(b);
}

std::vector<float> SoloSequence::step(std::span<const int32_t> tokens,
                                      std::vector<int32_t> logit_rows) {
  const int64_t capacity = int64_t{cache_.shape().n_blocks} * cache_.shape().block_size;
  if (length_ + static_cast<int64_t>(tokens.size()) > capacity) {
    throw Error(ErrorCategory::kInvalidArgument, std::to_string(length_ + tokens.size()) +
                                                     " tokens do not fit a cache of " +
                                                     std::to_string(capacity));
  }
  auto layout = std::make_shared<PagedBatch>();
  layout->block_size = cache_.shape().block_size;
  layout->block_tables = {blocks_};
  StepInput input;
  input.tokens.assign(tokens.begin(), tokens.end());
  for (size_t i = 0; i < tokens.size(); ++i) {
    layout->token_seq.push_back(0);
    layout->token_pos.push_back(length_++);
  }
  input.layout = std::move(layout);
  input.logit_rows = std::move(logit_rows);
  input.context_size = context_size_;
  return run_step(model_, backend_, cache_, input);
}

}  // namespace baton
