#pragma once

#include <deque>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/runtime/backend.h"
#include "core/serving/engine/pipeline_io.h"
#include "core/serving/engine/replica_group.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "models/model.h"

namespace baton {

// Copy-on-write block copies a step applies before it runs: (source, destination).
using BlockCopies = std::span<const std::pair<int32_t, int32_t>>;

// Builds one step's graph, runs it on the backend and brings the logits back to the host:
// logit_rows.size() rows of the model's output width, in the order of input.logit_rows.
std::vector<float> run_step(const Model& model, Backend& backend, const PagedKvCache& cache,
                            const StepInput& input);

// Runs the steps of one engine replica on this process's part of it: the whole model in a
// single process, or its shard of a distributed replica (models/model.h ModelShard), whose
// ranks all run every step. The leader calls run(), or launch() and collect(); it broadcasts the
// step to the other ranks, which wait in follow(). Across stages the hidden state is passed on;
// within a stage the tensor-parallel ranks' vocabulary slices of the logits are gathered; the
// leader gets whole rows.
//
// With pipeline stages, launch() returns once the leader's own stage has run, so up to depth()
// steps (micro-batches) are in flight: while later stages compute one, the leader computes the
// first stage of the next.
class StepRunner {
 public:
  // `group` is null in a single process.
  StepRunner(const Model& model, Backend& backend, const PagedKvCache& cache,
             std::shared_ptr<const ReplicaGroup> group = nullptr);
  // The leader tells the followers to return from follow(), unless a step failed (a failed
  // collective leaves nothing to tell them through).
  ~StepRunner();

  // Applies `copies` to the cache and runs the step; on the leader returns logit_rows.size()
  // rows of n_vocab floats.
  std::vector<float> run(BlockCopies copies, const StepInput& input);
  // run() in two halves: launch() starts the step, collect() returns the logits of the oldest
  // step launched and not yet collected. Every rank runs the steps in launch order, so a step
  // sees the K/V of each step launched before it.
  void launch(BlockCopies copies, const StepInput& input);
  std::vector<float> collect();
  // How many launched steps keep every stage busy: the pipeline's stages, 1 without them.
  int32_t depth() const;
  // A follower: runs what the leader broadcasts until the leader's StepRunner is destroyed.
  void follow();

  const Model& model() const { return model_; }
  const PagedKvCache& cache() const { return cache_; }

 private:
  bool leader() const { return !group_ || group_->replica->rank() == 0; }
  // After a failed step the ranks are out of step (a transfer may be half done): none runs more.
  void throw_if_failed() const;
  std::vector<float> run_here(BlockCopies copies, const StepInput& input);
  // A later pipeline stage's input: the previous stage's hidden state added to `input`.
  StepInput with_received_hidden(const StepInput& input);
  std::vector<float> whole_logits(std::vector<float> slice, size_t rows);

  const Model& model_;
  Backend& backend_;
  const PagedKvCache& cache_;
  std::shared_ptr<const ReplicaGroup> group_;
  std::unique_ptr<PipelineIo> io_;        // the pipeline leader's transfers
  std::deque<std::vector<float>> ready_;  // logits of steps launched without io_
  bool failed_ = false;
};

// One sequence that owns a whole cache, blocks in order, so it needs no block manager: what
// the benchmark and perplexity run outside the engine. A new SoloSequence on the same cache
// starts again at position 0 and overwrites the old K/V.
class SoloSequence {
 public:
  // `context_size` is the context the model is told it runs in (StepInput::context_size, which
  // picks LongRoPE's factors); 0 means the cache's capacity.
  SoloSequence(const Model& model, Backend& backend, const PagedKvCache& cache,
               int32_t context_size = 0);
  // Steps through `runner`, which may be a distributed replica's leader.
  explicit SoloSequence(StepRunner& runner, int32_t context_size = 0);

  // Appends `tokens` and returns the logits of the tokens at `logit_rows` (indices into
  // `tokens`), logit_rows.size() rows of n_vocab floats.
  std::vector<float> step(std::span<const int32_t> tokens, std::vector<int32_t> logit_rows);
  // Every later step applies the LoRA adapter in `slot` of `slots`, which must outlive them.
  void use_lora(const LoraSlots& slots, int32_t slot);

 private:
  std::unique_ptr<StepRunner> own_runner_;
  StepRunner& runner_;
  std::vector<int32_t> blocks_;
  int32_t context_size_;
  int32_t length_ = 0;
  const LoraSlots* lora_slots_ = nullptr;
  int32_t lora_slot_ = -1;
};

}  // namespace baton
