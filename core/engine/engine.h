#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/llm.h"
#include "core/backend.h"
#include "core/engine/block_manager.h"
#include "core/engine/scheduler.h"
#include "core/kv_cache/paged_kv_cache.h"
#include "core/tokenizer/tokenizer.h"
#include "models/model.h"

namespace baton {

struct EngineConfig {
  SchedulerConfig scheduler;
  int32_t context_size = 2048;  // tokens per sequence
  int32_t block_size = 16;
  int32_t n_blocks = 0;  // KV pool size in blocks
  bool prefix_caching = true;
};

// What one step did to one request.
struct SequenceUpdate {
  uint64_t id = 0;
  std::vector<int32_t> new_tokens;
  bool finished = false;
  FinishReason finish_reason = FinishReason::kLength;
  std::string error;  // set when the request was rejected
};

struct EngineCounters {
  int64_t steps = 0;
  int64_t computed_tokens = 0;  // tokens run through the model, prefill and decode
  int64_t generated_tokens = 0;
  int64_t preemptions = 0;
  int64_t prefix_query_tokens = 0;
  int64_t prefix_hit_tokens = 0;
};

// Continuous batching over the paged KV cache: requests join and leave between steps, and every
// step runs one token-flattened forward pass over all scheduled sequences.
class Engine {
 public:
  Engine(const Model& model, Backend& backend, const Tokenizer& tokenizer,
         const EngineConfig& config);
  ~Engine();

  uint64_t add(std::vector<int32_t> prompt, const GenerationParams& params, int32_t priority = 0);
  // Ends a request now; its blocks return to the pool.
  void abort(uint64_t id);
  bool has_work() const { return !scheduler_.empty(); }
  std::vector<SequenceUpdate> step();

  EngineCounters counters() const;
  const BlockManager& blocks() const { return blocks_; }

 private:
  struct Request {
    Sequence sequence;
    GenerationParams params;
  };
  void finish(Request& request, FinishReason reason, SequenceUpdate& update);

  const Model& model_;
  Backend& backend_;
  const Tokenizer& tokenizer_;
  EngineConfig config_;
  PagedKvCache cache_;
  BlockManager blocks_;
  Scheduler scheduler_;
  std::map<uint64_t, std::unique_ptr<Request>> requests_;
  uint64_t next_id_ = 1;
  EngineCounters counters_;
};

}  // namespace baton
