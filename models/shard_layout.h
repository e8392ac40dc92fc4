#pragma once

#include <optional>

#include "models/model.h"
#include "models/weight_loader.h"

namespace baton {

// How tensor-parallel rank shard.tp_rank cuts a Llama-style model (Megatron-LM): q and the
// gate/up projections by rows (its heads and feed-forward rows), k and v by KV heads, or one
// replicated KV head per rank when there are fewer KV heads than ranks, the attention output and
// down projections by the matching columns, the output projection by vocabulary rows. Slices are
// empty when the shard is not split.
struct ShardLayout {
  ModelConfig local;  // the shard's config: its n_head, n_head_kv and n_ff
  std::optional<WeightSlice> q_rows, kv_rows, ffn_rows, attn_columns, ffn_columns, vocab_rows;
};

// Error(kUnsupported) naming the quantity that does not divide over the ranks, or a layer range
// outside the model.
ShardLayout shard_layout(const ModelConfig& config, const ModelShard& shard);

}  // namespace baton
