#include "core/api/data_parallel_router.h"

#include <limits>
#include <utility>

#include "core/api/replica_stats.h"
#include "core/serving/engine/prefix_cache.h"

namespace baton {
namespace {

// A replica holding the prompt's prefix takes the request while it has at most this many more
// live sequences than the one with fewest: the prefill it saves outweighs a small imbalance, and
// a prefix everyone shares still spreads (the next replica learns it after one request).
constexpr int32_t kPrefixSequenceSlack = 1;

// Prefix blocks remembered per replica, most recent kept: more than a replica's cache holds at
// the default pool sizes, and a few hundred KiB at most.
constexpr size_t kRememberedBlocks = 16384;

}  // namespace

std::vector<uint64_t> prefix_block_hashes(const std::vector<int32_t>& prompt, int32_t block_size) {
  std::vector<uint64_t> hashes;
  uint64_t parent = 0;
  const std::span<const int32_t> tokens(prompt);
  for (size_t at = 0; at + static_cast<size_t>(block_size) <= tokens.size(); at += block_size) {
    parent = chain_hash(parent, tokens.subspan(at, static_cast<size_t>(block_size)), 0);
    hashes.push_back(parent);
  }
  return hashes;
}

DataParallelRouter::DataParallelRouter(int32_t replicas, int32_t block_size,
                                       const ReplicaFactory& make, UpdateSink sink)
    : block_size_(block_size), sink_(std::move(sink)), replicas_(static_cast<size_t>(replicas)) {
  try {
    for (int32_t i = 0; i < replicas; ++i) {
      replicas_[static_cast<size_t>(i)].engine = make(
          i, [this, i](std::vector<SequenceUpdate> updates) { received(i, std::move(updates)); },
          [this, i](const std::string& error) { lost(i, error); });
    }
  } catch (...) {
    stop_replicas();
    throw;
  }
}

DataParallelRouter::~DataParallelRouter() {
  stop_replicas();
}

void DataParallelRouter::stop_replicas() {
  // Their threads call back into the router until they are joined.
  for (Replica& replica : replicas_) replica.engine.reset();
}

void DataParallelRouter::add(uint64_t id, std::vector<int32_t> prompt,
                             const GenerationParams& params, int32_t priority) {
  const std::vector<uint64_t> prefix = prefix_block_hashes(prompt, block_size_);
  std::unique_lock lock(mutex_);
  const int32_t index = route(prefix);
  if (index < 0) {
    lock.unlock();
    sink_({{.id = id,
            .finished = true,
            .error = "every data-parallel replica of this run has failed",
            .engine_failed = true}});
    return;
  }
  Replica& replica = replicas_[static_cast<size_t>(index)];
  replica.live.added(id, params);
  owner_[id] = index;
  remember(replica, prefix);
  replica.engine->add(id, std::move(prompt), params, priority);
}

void DataParallelRouter::abort(uint64_t id) {
  std::lock_guard lock(mutex_);
  const auto it = owner_.find(id);
  if (it == owner_.end()) return;
  Replica& replica = replicas_[static_cast<size_t>(it->second)];
  owner_.erase(it);
  replica.live.aborted(id);
  replica.engine->abort(id);
}

void DataParallelRouter::abort_sample(uint64_t id, int32_t sample) {
  std::lock_guard lock(mutex_);
  const auto it = owner_.find(id);
  if (it == owner_.end()) return;
  Replica& replica = replicas_[static_cast<size_t>(it->second)];
  replica.live.sample_aborted(id, sample);
  if (!replica.live.contains(id)) owner_.erase(it);
  replica.engine->abort_sample(id, sample);
}

EngineStats DataParallelRouter::stats() const {
  return merge_replica_stats(replica_stats());
}

std::vector<EngineStats> DataParallelRouter::replica_stats() const {
  std::vector<EngineStats> all;
  for (const Replica& replica : replicas_) all.push_back(replica.engine->stats());
  return all;
}

int32_t DataParallelRouter::route(const std::vector<uint64_t>& prefix) const {
  int32_t fewest = std::numeric_limits<int32_t>::max();
  for (const Replica& replica : replicas_) {
    if (!replica.lost) fewest = std::min(fewest, replica.live.sequences());
  }
  int32_t best = -1;
  size_t best_match = 0;
  double best_load = 0;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& replica = replicas_[i];
    if (replica.lost || replica.live.sequences() > fewest + kPrefixSequenceSlack) continue;
    size_t match = 0;
    while (match < prefix.size() && replica.prefixes.contains(prefix[match])) ++match;
    const EngineStats s = replica.engine->stats();
    const double kv_use =
        s.kv_blocks_total > 0 ? static_cast<double>(s.kv_blocks_used) / s.kv_blocks_total : 0.0;
    const double load = replica.live.sequences() + kv_use;
    if (best < 0 || match > best_match || (match == best_match && load < best_load)) {
      best = static_cast<int32_t>(i);
      best_match = match;
      best_load = load;
    }
  }
  return best;
}

void DataParallelRouter::remember(Replica& replica, const std::vector<uint64_t>& prefix) {
  for (uint64_t hash : prefix) {
    const auto it = replica.prefixes.find(hash);
    if (it != replica.prefixes.end()) replica.recent_prefixes.erase(it->second);
    replica.recent_prefixes.push_front(hash);
    replica.prefixes[hash] = replica.recent_prefixes.begin();
  }
  while (replica.recent_prefixes.size() > kRememberedBlocks) {
    replica.prefixes.erase(replica.recent_prefixes.back());
    replica.recent_prefixes.pop_back();
  }
}

void DataParallelRouter::received(int32_t index, std::vector<SequenceUpdate> updates) {
  {
    std::lock_guard lock(mutex_);
    Replica& replica = replicas_[static_cast<size_t>(index)];
    for (const SequenceUpdate& update : updates) {
      if (replica.live.ended_by(update)) owner_.erase(update.id);
    }
  }
  sink_(std::move(updates));
}

void DataParallelRouter::lost(int32_t index, const std::string& error) {
  std::vector<SequenceUpdate> failed;
  {
    std::lock_guard lock(mutex_);
    Replica& replica = replicas_[static_cast<size_t>(index)];
    replica.lost = true;
    replica.live = {};
    for (auto it = owner_.begin(); it != owner_.end();) {
      if (it->second != index) {
        ++it;
        continue;
      }
      failed.push_back(
          {.id = it->first,
           .finished = true,
           .error = "data-parallel replica " + std::to_string(index) + " failed: " + error,
           .engine_failed = true});
      it = owner_.erase(it);
    }
  }
  if (!failed.empty()) sink_(std::move(failed));
}

}  // namespace baton
