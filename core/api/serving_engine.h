#pragma once

#include <memory>

#include "core/api/loaded_model.h"
#include "core/api/replica_engine.h"

namespace baton {

// The engine AsyncLLM serves with: the loaded replica's own, or, with data parallelism, a router
// over it and the remote replicas that the other replicas' first ranks serve.
std::unique_ptr<ReplicaEngine> make_serving_engine(const LoadedModel& loaded,
                                                   ReplicaEngine::UpdateSink sink);

}  // namespace baton
