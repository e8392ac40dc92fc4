#include "core/api/placement.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "baton/error.h"
#include "core/api/handshake.h"
#include "core/api/loaded_model.h"
#include "core/api/replica_server.h"
#include "core/runtime/comm/world.h"
#include "core/serving/engine/step_runner.h"
#include "models/model_config.h"

namespace baton {
namespace {

[[noreturn]] void bad(const std::string& what) {
  throw Error(ErrorCategory::kInvalidArgument, what);
}

// Layers per stage: pp_layers as given, or n_layer / stages with the remainder on the first.
std::vector<int32_t> stage_layers(const LLMOptions& options, int32_t n_layer) {
  const int32_t stages = options.parallel.pipeline_parallel;
  if (options.parallel.pp_layers.empty()) {
    std::vector<int32_t> layers(static_cast<size_t>(stages), n_layer / stages);
    for (int32_t s = 0; s < n_layer % stages; ++s) ++layers[static_cast<size_t>(s)];
    return layers;
  }
  const std::vector<int32_t>& layers = options.parallel.pp_layers;
  const bool positive = std::all_of(layers.begin(), layers.end(), [](int32_t n) { return n > 0; });
  if (static_cast<int32_t>(layers.size()) != stages || !positive ||
      std::accumulate(layers.begin(), layers.end(), 0) != n_layer) {
    bad("--pp-layers needs " + std::to_string(stages) +
        " positive layer counts that add up to the model's " + std::to_string(n_layer) + " layers");
  }
  return layers;
}

}  // namespace

Placement place_process(const LLMOptions& options, const gguf::GgufFile& file) {
  const ParallelOptions& parallel = options.parallel;
  const int32_t dp = parallel.data_parallel, tp = parallel.tensor_parallel,
                pp = parallel.pipeline_parallel;
  if (dp < 1 || tp < 1 || pp < 1) {
    bad("--data-parallel, --tensor-parallel and --pipeline-parallel must be at least 1");
  }
  if (!(parallel.dist_timeout_seconds > 0)) bad("--dist-timeout must be positive");
  const int32_t per_replica = tp * pp, ranks = dp * per_replica, launched = launched_world_size();
  if (ranks == 1 && launched == 1) return {};
  if (launched != ranks) {
    bad("the run needs --data-parallel " + std::to_string(dp) + " x --pipeline-parallel " +
        std::to_string(pp) + " x --tensor-parallel " + std::to_string(tp) + " = " +
        std::to_string(ranks) + " processes, but " + std::to_string(launched) +
        (launched == 1 ? " was" : " were") + " started: launch with mpirun -np " +
        std::to_string(ranks) + " (or srun -n)");
  }
  const std::shared_ptr<Communicator> world = open_world(parallel.dist_timeout_seconds);
  handshake(*world, start_up_fingerprint(options, file));
  const int32_t replica_index = world->rank() / per_replica, rank = world->rank() % per_replica;
  const int32_t stage = rank / tp, tp_rank = rank % tp;
  Placement placement;
  placement.timeout_seconds = parallel.dist_timeout_seconds;
  auto group = std::make_shared<ReplicaGroup>();
  group->replica = dp > 1 ? world->split(replica_index, rank) : world;
  if (tp > 1) group->tensor = group->replica->split(stage, tp_rank);
  if (pp > 1) group->pipeline = group->replica->split(tp_rank, stage);
  if (dp > 1) {
    // Every rank takes part in the split; only the replicas' first ranks keep theirs.
    std::shared_ptr<Communicator> leaders = world->split(rank == 0 ? 0 : 1, replica_index);
    if (rank == 0) placement.replica_leaders = std::move(leaders);
  }
  const std::vector<int32_t> layers = stage_layers(options, read_model_config(file).n_layer);
  placement.shard.tp_rank = tp_rank;
  placement.shard.tp_size = tp;
  placement.shard.tensor_group = group->tensor.get();
  placement.shard.first_layer = std::accumulate(layers.begin(), layers.begin() + stage, 0);
  placement.shard.end_layer = placement.shard.first_layer + layers[static_cast<size_t>(stage)];
  if (per_replica > 1) placement.replica = std::move(group);
  return placement;
}

bool is_follower_rank(const LLMOptions& options) {
  if (launched_world_size() == 1) return false;
  return open_world(options.parallel.dist_timeout_seconds)->rank() != 0;
}

void follow_leader(const LLMOptions& options) {
  const LoadedModel loaded(options);
  if (loaded.placement.replica_leaders) {
    return serve_router_requests(loaded, *loaded.placement.replica_leaders);
  }
  const PagedKvCache cache(kv_cache_shape(*loaded.model, loaded.engine_config), *loaded.backend);
  StepRunner runner(*loaded.model, *loaded.backend, cache, loaded.engine_config.replica);
  runner.follow();
}

}  // namespace baton
