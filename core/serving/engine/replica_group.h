#pragma once

#include <memory>

#include "core/runtime/comm/communicator.h"

namespace baton {

// The ranks that together run one engine replica of a distributed run: its pipeline stages,
// each split over a tensor-parallel group. Rank 0 of `replica` is the leader: it runs the
// scheduler and the sampler, and broadcasts each step's token ids, positions and block tables
// (never activations) to the other ranks, which follow (StepRunner::follow).
struct ReplicaGroup {
  std::shared_ptr<Communicator> replica;   // every rank of the replica: stage * tp + tp rank
  std::shared_ptr<Communicator> tensor;    // this rank's stage; null without tensor parallelism
  std::shared_ptr<Communicator> pipeline;  // one rank per stage, this tensor rank; null without
};

}  // namespace baton
