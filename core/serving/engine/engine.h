#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "baton/generation.h"
#include "baton/llm_options.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/runtime/backend.h"
#include "core/serving/engine/beam_search.h"
#include "core/serving/engine/block_manager.h"
#include "core/serving/engine/grammar_service.h"
#include "core/serving/engine/length_head.h"
#include "core/serving/engine/length_service.h"
#include "core/serving/engine/lora_admission.h"
#include "core/serving/engine/replica_group.h"
#include "core/serving/engine/request_checks.h"
#include "core/serving/engine/sampling_state.h"
#include "core/serving/engine/scheduler.h"
#include "core/serving/engine/step_runner.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "core/serving/sampling/grammar_constraint.h"
#include "models/model.h"

namespace baton {

// What an engine runs with: the options it was loaded with, and what loading made of them.
struct EngineConfig {
  LLMOptions options;
  int32_t context_size = 2048;  // tokens per sequence
  int32_t n_blocks = 0;         // KV pool size in blocks
  // LLMOptions::grammar_masks resolved for the backend: the default of an engine made directly
  // is after, which takes no core from a CPU backend's step.
  bool grammar_masks_beside_step = false;
  // The ranks of a distributed replica this engine leads; null in a single process.
  std::shared_ptr<const ReplicaGroup> replica;
  // LoRA adapters in a batch at once, each a slot on the backend (LLMOptions::max_loras, or as
  // many as it lists); 0: none is served.
  int32_t lora_slots = 0;
  // When set, a request's predicted length is made again from its prompt's last logits row once
  // its prefill is done (a client's hint still wins); null: the online predictor's alone.
  std::shared_ptr<const LengthHead> length_head;
};

// The KV cache a model's shard needs: its layers and KV heads, as `config` sizes the pool.
KvCacheShape kv_cache_shape(const Model& model, const EngineConfig& config);

// What one step did to one of a request's completions.
struct SequenceUpdate {
  uint64_t id = 0;                      // the request
  int32_t sample = 0;                   // the completion: sample index, or rank for beam search
  std::vector<int32_t> new_tokens;      // a beam's whole token list, reported once it is final
  std::vector<TokenLogprobs> logprobs;  // one per new token when the request asked for them
  double cumulative_logprob = 0;        // of all the completion's tokens so far
  bool finished = false;
  FinishReason finish_reason = FinishReason::kLength;
  // With kStop: the token that ended the sample is text (the grammar's last character), not an
  // end-of-generation or stop token, which the text leaves out.
  bool last_token_is_text = false;
  std::string error;           // set when the request was rejected
  bool engine_failed = false;  // with error: a step failed, the request itself was fine
  // When the request was first scheduled (the epoch until then) and how many of its prompt
  // tokens the prefix cache served: for per-request metrics.
  std::chrono::steady_clock::time_point first_scheduled{};
  int32_t cached_prompt_tokens = 0;
};

// Continuous batching over the paged KV cache: requests join and leave between steps, and every
// step runs one token-flattened forward pass over all scheduled sequences.
class Engine {
 public:
  Engine(const Model& model, Backend& backend, const Tokenizer& tokenizer,
         const EngineConfig& config);
  ~Engine();

  // A request naming a LoRA adapter (GenerationParams::lora) waits, without holding up the
  // others, until the adapter has a slot. Throws Error(kInvalidArgument) for an unknown adapter.
  uint64_t add(std::vector<int32_t> prompt, const GenerationParams& params, int32_t priority = 0);
  // Serves `adapter` under its name from now on. Throws Error(kInvalidArgument) when the engine
  // has no LoRA slots (EngineConfig::lora_slots), the name is taken, or the adapter's rank is
  // above max_lora_rank.
  void add_lora(std::shared_ptr<const LoraAdapter> adapter);
  // Stops serving an adapter to new requests; those already using it finish with it.
  void remove_lora(const std::string& name);
  // Ends a request; its blocks return to the pool. It reports nothing more. A request in a
  // micro-batch still in flight ends when that step is collected.
  void abort(uint64_t id);
  // Ends one sample of a request (a stop string matched it); the others go on. Beams are not
  // independent, so for beam search this ends the whole request.
  void abort_sample(uint64_t id, int32_t sample);
  bool has_work() const { return !scheduler_.empty() || !in_flight_.empty() || lora_.has_parked(); }
  bool has_request(uint64_t id) const {
    return requests_.contains(id) && !deferred_aborts_.contains(id);
  }
  // Runs a step and returns what it produced. With pipeline stages, it first launches
  // micro-batches until LLMOptions::parallel.pp_micro_batches (by default one per stage) are
  // in flight, each taking the sequences no step in flight holds within an even share of the
  // token budget, then collects the oldest.
  std::vector<SequenceUpdate> step();

  // Its counters and gauges; the finish counts are the caller's, who sees the outputs.
  EngineStats stats() const;
  const BlockManager& blocks() const { return blocks_; }

 private:
  struct Request {
    GenerationParams params;
    // The sampling side of its live samples or beams, in beam order; the scheduler holds their
    // sequences, except the first one's while the request waits for its adapter (`parked`).
    std::vector<std::unique_ptr<SamplingState>> sequences;
    std::unique_ptr<Sequence> parked;
    bool forked = false;  // the prompt's logits were consumed and the samples split off
    BeamSearch beams;     // with beam search: the live beams' reports and the ended beams
    std::chrono::steady_clock::time_point first_scheduled{};
    int32_t cached_prompt_tokens = 0;
    LoraResidency::Handle lora;   // params.lora's adapter, as it arrived; null: none
    LoraResidency::Pin lora_pin;  // its slot, once it has one
    PredictedLength length;
  };
  // A completion ended after `generated` tokens: the predictions learn it, and the scheduler
  // trusts them or not as they judge.
  void learn_length(const Request& request, int32_t generated);
  void refresh_cold_predictions();
  // Gives a request its adapter's slot (true), or false when no slot is free yet or the weights
  // are still being read. `arriving`: the request asks for the first time (not parked).
  bool pin_adapter(Request& request, Sequence& first, bool arriving);
  // Requests whose adapter now has a slot join the scheduler; those whose adapter could not be
  // read again end with the error, reported by the next step.
  void admit_parked();
  // Sampling state for a new fork of `parent`, whose scheduler side `results` asks for.
  SamplingState& fork(Request& request, const SamplingState& parent, int32_t sample,
                      StepResults& results);
  // Ends one of the request's sequences: in `results` while a step's logits are sampled, at once
  // otherwise.
  void remove_sequence(Request& request, SamplingState* sequence, StepResults* results = nullptr);
  // The sampling state of the sequence a chunk of a plan not yet collected names:
  // Error(kInternal) when gone.
  SamplingState& planned(const ScheduledChunk& chunk) const;
  // The scheduler's state of one of the request's sequences, or the spec of a parked one.
  const Sequence& state(const Request& request, const SamplingState& sequence) const;
  // Ends every sequence of a request and forgets it; its sequences end in `results` while a
  // step's logits are sampled.
  void drop(uint64_t id, StepResults* results = nullptr);
  void sample_tokens(Request& request, SamplingState& s, std::span<const float> logits,
                     std::vector<SequenceUpdate>& updates, StepResults& results);
  void advance_beams(Request& request, SamplingState& s, std::span<const float> logits,
                     std::vector<SequenceUpdate>& updates, StepResults& results);
  void finish_beams(uint64_t id, Request& request, std::vector<SequenceUpdate>& updates,
                    StepResults& results);
  // A beam's best `count` next tokens: of those its grammar allows, when it has one.
  std::vector<TokenLogprob> beam_candidates(SamplingState& s, std::span<const float> logits,
                                            int32_t count);

  // When a request was first scheduled and how many prompt tokens the prefix cache served,
  // copied per stepped request because requests that finish are erased before the metrics go on
  // their updates.
  struct RequestStart {
    std::chrono::steady_clock::time_point first_scheduled;
    int32_t cached_prompt_tokens;
  };
  using RequestStarts = std::map<uint64_t, RequestStart>;
  // A step launched and not yet collected.
  struct InFlight {
    StepPlan plan;
    bool launched = false;  // a plan without chunks (only preemptions, rejections) runs nothing
  };
  // The stages of step(), in order.
  void fill_pipeline();
  size_t pipeline_depth() const;
  // Applies the plan's copy-on-write block copies and starts the batch, with the grammar masks
  // its logits will need computed beside it; counts the step.
  void launch(const StepPlan& plan, const StepInput& batch);
  std::vector<SequenceUpdate> collect_oldest();
  // Notes when requests were first scheduled; preempted beams report again.
  RequestStarts record_starts(const StepPlan& plan);
  // Samples or advances beams from each logit row, and ends finished and rejected requests; what
  // that changes of the sequences goes into `results`, for Scheduler::update_from_output.
  std::vector<SequenceUpdate> consume_logits(const StepPlan& plan, std::span<const float> logits,
                                             StepResults& results);
  static void add_request_metrics(const RequestStarts& starts,
                                  std::vector<SequenceUpdate>& updates);
  // After a failed step: no step is in flight any more (the caller aborts what it holds).
  void abandon_in_flight();
  // Aborts asked for while their request was in flight, once it no longer is; `updates` loses
  // what those requests and samples produced meanwhile.
  void apply_deferred_aborts(std::vector<SequenceUpdate>& updates);

  const Model& model_;
  const Tokenizer& tokenizer_;
  std::vector<char> beam_mask_;  // reused by beam_candidates
  EngineConfig config_;
  PagedKvCache cache_;
  StepRunner runner_;
  BlockManager blocks_;
  Scheduler scheduler_;
  LoraAdmission lora_;  // before requests_, whose pins it outlives
  std::map<uint64_t, std::unique_ptr<Request>> requests_;
  std::vector<SequenceUpdate> failed_admissions_;
  std::deque<InFlight> in_flight_;  // oldest first
  StepLimits limits_;               // busy: the requests of in_flight_'s plans
  std::set<uint64_t> deferred_aborts_;
  std::vector<std::pair<uint64_t, int32_t>> deferred_sample_aborts_;
  uint64_t next_id_ = 1;
  SeqId next_seq_ = 1;
  EngineStats counters_;  // what steps count as they go; stats() adds the rest
  LengthPredictionService lengths_;
  // Last: its mask thread ends before the sequences whose grammars it may read.
  GrammarService grammar_;
};

}  // namespace baton
