#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/api/live_requests.h"
#include "core/api/replica_engine.h"

namespace baton {

// Data parallelism's front: each request goes to one of several whole engine replicas, the one
// with the least load unless another that already holds the request's prompt prefix in its
// cache has at most one live sequence more. Load is the replica's live sequences as routed here
// (current, unlike a replica's last report) plus the fraction of its KV pool in use, which breaks
// ties.
// Thread-safe: requests come from AsyncLLM's text thread, updates from each replica's thread.
class DataParallelRouter final : public ReplicaEngine {
 public:
  // How the router reaches replica `index`: `sink` takes its updates; `on_failure` is called
  // when it is lost for good (a remote replica that stopped answering), at most once.
  using ReplicaFactory = std::function<std::unique_ptr<ReplicaEngine>(
      int32_t index, UpdateSink sink, std::function<void(const std::string&)> on_failure)>;

  // `block_size` tokens per KV block: prefixes are matched block by block, as the replicas'
  // prefix caches hold them.
  DataParallelRouter(int32_t replicas, int32_t block_size, const ReplicaFactory& make,
                     UpdateSink sink);
  // Stops every replica before the router's state goes.
  ~DataParallelRouter() override;

  void add(uint64_t id, std::vector<int32_t> prompt, const GenerationParams& params,
           int32_t priority) override;
  void abort(uint64_t id) override;
  void abort_sample(uint64_t id, int32_t sample) override;
  // Counters and gauges summed over the replicas.
  EngineStats stats() const override;
  std::vector<EngineStats> replica_stats() const override;

 private:
  struct Replica {
    std::unique_ptr<ReplicaEngine> engine;
    LiveRequests live;
    bool lost = false;
    // The prompt prefixes routed here, as chained block hashes, most recent first; bounded, as
    // the replica's cache is.
    std::list<uint64_t> recent_prefixes;
    std::unordered_map<uint64_t, std::list<uint64_t>::iterator> prefixes;
  };

  void stop_replicas();
  // The replica for a prompt with these prefix block hashes; -1 when every replica is lost.
  int32_t route(const std::vector<uint64_t>& prefix) const;
  void remember(Replica& replica, const std::vector<uint64_t>& prefix);
  void received(int32_t index, std::vector<SequenceUpdate> updates);
  void lost(int32_t index, const std::string& error);

  const int32_t block_size_;
  UpdateSink sink_;
  mutable std::mutex mutex_;
  std::vector<Replica> replicas_;
  std::map<uint64_t, int32_t> owner_;  // live request id -> replica index
};

// The chained hash of each whole `block_size`-token block of `prompt`, first block first: equal
// hashes at position i mean equal prompts up to the end of block i.
std::vector<uint64_t> prefix_block_hashes(const std::vector<int32_t>& prompt, int32_t block_size);

}  // namespace baton
