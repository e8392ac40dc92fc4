#include <algorithm>

#include "backends/cpu/attention/attention.h"

namespace baton::cpu::attn {

Plan make_plan(const PagedBatch& batch, int64_t n_tokens, int64_t kv_heads, int32_t window) {
  Plan plan;
  const int32_t n_seqs = static_cast<int32_t>(batch.block_tables.size());
  std::vector<std::vector<int32_t>> by_seq(static_cast<size_t>(n_seqs));
  for (int32_t t = 0; t < n_tokens; ++t) by_seq[batch.token_seq[t]].push_back(t);
  for (int32_t s = 0; s < n_seqs; ++s) {
    const int32_t base = static_cast<int32_t>(plan.tokens.size());
    const std::vector<int32_t>& tokens = by_seq[s];
    plan.tokens.insert(plan.tokens.end(), tokens.begin(), tokens.end());
    for (int32_t first = 0; first < static_cast<int32_t>(tokens.size()); first += kQueryTile) {
      const int32_t count =
          std::min(static_cast<int32_t>(kQueryTile), static_cast<int32_t>(tokens.size()) - first);
      // The positions some token of the tile attends to: from the earliest window start to the
      // latest position.
      int32_t kv_begin = batch.token_pos[tokens[first]], kv_end = 0;
      for (int32_t i = first; i < first + count; ++i) {
        kv_begin = std::min(kv_begin, first_attended(window, batch.token_pos[tokens[i]]));
        kv_end = std::max(kv_end, batch.token_pos[tokens[i]] + 1);
      }
      for (int32_t h = 0; h < kv_heads; ++h) {
        if (count > 1 || kv_end - kv_begin <= kSplitLength) {
          plan.items.push_back({s, h, base + first, count, kv_begin, kv_end, -1});
          continue;
        }
        Merge merge{tokens[first], h, plan.partials, 0};
        for (int32_t begin = kv_begin; begin < kv_end; begin += kSplitLength) {
          const int32_t end = std::min(kv_end, begin + static_cast<int32_t>(kSplitLength));
          plan.items.push_back({s, h, base + first, 1, begin, end, plan.partials++});
          ++merge.count;
        }
        plan.merges.push_back(merge);
      }
    }
  }
  // Causal prefill tiles near the end of a prompt cost the most; starting them first keeps the
  // dynamic schedule from ending on one long item.
  std::stable_sort(plan.items.begin(), plan.items.end(), [](const WorkItem& a, const WorkItem& b) {
    return int64_t{a.count} * (a.kv_end - a.kv_begin) > int64_t{b.count} * (b.kv_end - b.kv_begin);
  });
  return plan;
}

}  // namespace baton::cpu::attn
