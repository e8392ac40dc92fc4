#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/generation.h"
#include "core/serving/engine/engine.h"

namespace baton {

// What AsyncLLM's text thread hands requests to: one engine replica in this process
// (EngineLoop), one in another process (RemoteReplica), or a router over several
// (DataParallelRouter). Requests are named by the caller's ids; their updates reach the sink the
// implementation was made with, on a thread of its own. Thread-safe.
class ReplicaEngine {
 public:
  // Receives each batch of updates. A request that is refused (bad parameters) or cannot be
  // served (a failed step, a lost replica) gets a finished update with `error` set.
  using UpdateSink = std::function<void(std::vector<SequenceUpdate> updates)>;

  virtual ~ReplicaEngine() = default;

  virtual void add(uint64_t id, std::vector<int32_t> prompt, const GenerationParams& params,
                   int32_t priority) = 0;
  virtual void abort(uint64_t id) = 0;
  virtual void abort_sample(uint64_t id, int32_t sample) = 0;
  // Counters and gauges as of the last step; finish counts are left to the caller.
  virtual EngineStats stats() const = 0;
  // The same per replica, in replica order: one entry unless requests are routed over several.
  virtual std::vector<EngineStats> replica_stats() const { return {stats()}; }
  // Serves `adapter`, or stops serving one, from the next request on; returns once done and
  // throws what the engine throws (Engine::add_lora, remove_lora). Replicas in other processes
  // would each need the adapter's file: not supported yet.
  virtual void add_lora(std::shared_ptr<const LoraAdapter> adapter);
  virtual void remove_lora(const std::string& name);
};

}  // namespace baton
