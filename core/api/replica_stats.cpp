#include "core/api/replica_stats.h"

#include <cassert>
#include <type_traits>

namespace baton {

EngineStats merge_replica_stats(const std::vector<EngineStats>& replicas) {
  EngineStats merged;
  for_each_stat_field([&](const StatField& field, auto member) {
    using Value = std::remove_reference_t<decltype(merged.*member)>;
    if constexpr (std::is_same_v<Value, bool>) {
      assert(field.merge == StatMerge::kAll && "a flag merges only as all-of");
      bool all = true;
      for (const EngineStats& r : replicas) all = all && r.*member;
      merged.*member = all;
    } else if (field.merge == StatMerge::kMeanOverPredictions ||
               field.merge == StatMerge::kMeanOverHeadPredictions) {
      const auto weight = field.merge == StatMerge::kMeanOverPredictions
                              ? &EngineStats::length_predictions
                              : &EngineStats::length_head_predictions;
      double weighted = 0, total = 0;
      for (const EngineStats& r : replicas) {
        weighted += static_cast<double>(r.*weight) * static_cast<double>(r.*member);
        total += static_cast<double>(r.*weight);
      }
      merged.*member = total > 0 ? static_cast<Value>(weighted / total) : Value{};
    } else if (field.merge == StatMerge::kSum) {
      Value sum{};
      for (const EngineStats& r : replicas) sum += r.*member;
      merged.*member = sum;
    }
  });
  if (merged.prefix_query_tokens > 0) {
    merged.prefix_cache_hit_rate = static_cast<double>(merged.prefix_hit_tokens) /
                                   static_cast<double>(merged.prefix_query_tokens);
  }
  return merged;
}

}  // namespace baton
