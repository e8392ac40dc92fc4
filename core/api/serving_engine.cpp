#include "core/api/serving_engine.h"

#include <utility>

#include "core/api/data_parallel_router.h"
#include "core/api/engine_loop.h"
#include "core/api/remote_replica.h"

namespace baton {

std::unique_ptr<ReplicaEngine> make_serving_engine(const LoadedModel& loaded,
                                                   ReplicaEngine::UpdateSink sink) {
  const Placement& placement = loaded.placement;
  if (!placement.replica_leaders) return std::make_unique<EngineLoop>(loaded, std::move(sink));
  Communicator& leaders = *placement.replica_leaders;
  const auto make = [&](int32_t index, ReplicaEngine::UpdateSink replica_sink,
                        RemoteReplica::FailureSink on_failure) -> std::unique_ptr<ReplicaEngine> {
    if (index == 0) return std::make_unique<EngineLoop>(loaded, std::move(replica_sink));
    return std::make_unique<RemoteReplica>(leaders, index, placement.timeout_seconds,
                                           std::move(replica_sink), std::move(on_failure));
  };
  return std::make_unique<DataParallelRouter>(
      leaders.size(), loaded.engine_config.options.kv_block_size, make, std::move(sink));
}

}  // namespace baton
