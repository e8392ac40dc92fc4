#include "models/shard_layout.h"

#include <string>

#include "baton/error.h"

namespace baton {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw Error(ErrorCategory::kUnsupported, what);
}

WeightSlice rows(int64_t first, int64_t count) {
  return {.axis = WeightSlice::Axis::kRows, .first = first, .count = count};
}

WeightSlice columns(int64_t first, int64_t count) {
  return {.axis = WeightSlice::Axis::kColumns, .first = first, .count = count};
}

}  // namespace

VocabularySlice vocabulary_slice(int64_t n_vocab, int32_t rank, int32_t size) {
  const int64_t stride = (n_vocab + size - 1) / size;
  const int64_t first = std::min(n_vocab, stride * rank);
  return {.first = first, .count = std::min(stride, n_vocab - first), .stride = stride};
}

ShardLayout shard_layout(const ModelConfig& config, const ModelShard& shard) {
  const int32_t end = shard.layer_end(config.n_layer);
  if (shard.first_layer < 0 || shard.first_layer >= end || end > config.n_layer) {
    refuse("layers " + std::to_string(shard.first_layer) + ".." + std::to_string(end) +
           " are not a range of the model's " + std::to_string(config.n_layer));
  }
  ShardLayout layout{.local = config};
  const int32_t tp = shard.tp_size, rank = shard.tp_rank;
  if (tp == 1) return layout;
  const auto divides = [&](int64_t n, const std::string& what) {
    if (n % tp != 0) {
      refuse("--tensor-parallel " + std::to_string(tp) + " does not divide the model's " + what +
             " (" + std::to_string(n) + ")");
    }
    return n / tp;
  };
  ModelConfig& local = layout.local;
  local.n_head = static_cast<int32_t>(divides(config.n_head, "attention heads"));
  local.n_ff = static_cast<int32_t>(divides(config.n_ff, "feed-forward size"));
  const int64_t head = config.head_dim;
  if (config.n_head_kv % tp == 0) {
    local.n_head_kv = config.n_head_kv / tp;
    layout.kv_rows = rows(rank * local.n_head_kv * head, local.n_head_kv * head);
  } else if (tp % config.n_head_kv == 0) {
    // Each KV head serves tp / n_head_kv ranks' query heads, which are contiguous.
    local.n_head_kv = 1;
    layout.kv_rows = rows(rank / (tp / config.n_head_kv) * head, head);
  } else {
    refuse("--tensor-parallel " + std::to_string(tp) +
           " neither divides nor is a multiple of the " + "model's " +
           std::to_string(config.n_head_kv) + " KV heads");
  }
  const int64_t q_dim = int64_t{local.n_head} * head;
  layout.q_rows = rows(rank * q_dim, q_dim);
  layout.attn_columns = columns(rank * q_dim, q_dim);
  layout.ffn_rows = rows(int64_t{rank} * local.n_ff, local.n_ff);
  layout.ffn_columns = columns(int64_t{rank} * local.n_ff, local.n_ff);
  const VocabularySlice vocab = vocabulary_slice(config.n_vocab, rank, tp);
  layout.vocab_rows = rows(vocab.first, vocab.count);
  return layout;
}

}  // namespace baton
