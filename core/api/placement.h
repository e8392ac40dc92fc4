#pragma once

#include <memory>

#include "baton/llm.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/serving/engine/replica_group.h"
#include "models/model.h"

namespace baton {

// Where this process stands in the run `options` describe: its part of the model and the
// ranks it runs each step with.
struct Placement {
  std::shared_ptr<const ReplicaGroup> replica;  // null for a replica of one process
  ModelShard shard;
  // With data parallelism, on the first rank of each replica: those first ranks, numbered by
  // replica. Rank 0 routes the requests; the others serve their replica's share
  // (serve_router_requests). Null otherwise.
  std::shared_ptr<Communicator> replica_leaders;
  double timeout_seconds = 0;  // --dist-timeout
};

// A single process needs nothing and opens no MPI. Otherwise checks that the launcher started
// data_parallel × pipeline_parallel × tensor_parallel processes, opens the world, runs the
// start-up handshake (every rank fails with the same line on a mismatch) and splits the ranks:
// world rank (replica * pipeline_parallel + stage) * tensor_parallel + tensor rank. Stages get
// pp_layers layers each, or an even split.
Placement place_process(const LLMOptions& options, const gguf::GgufFile& file);

// Whether this process is a rank other than the run's first, which follows the leader's steps
// (follow_leader) instead of serving; false in a single process.
bool is_follower_rank(const LLMOptions& options);

// On a follower rank: loads this rank's part of the model and runs the leader's steps until the
// leader finishes; on the first rank of another data-parallel replica, serves the requests rank 0
// routes to it until rank 0 ends the run.
void follow_leader(const LLMOptions& options);

}  // namespace baton
