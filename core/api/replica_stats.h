#pragma once

#include <vector>

#include "baton/engine_stats.h"

namespace baton {

// The stats of a data-parallel run: each field of `replicas` combined as its row of
// for_each_stat_field says (sums, means weighted by each replica's predictions, all-of, and the
// prefix-cache hit rate recomputed from the summed tokens).
EngineStats merge_replica_stats(const std::vector<EngineStats>& replicas);

}  // namespace baton
