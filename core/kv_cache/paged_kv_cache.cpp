#include "core/kv_cache/paged_kv_cache.h"

#include <string>

#include "baton/error.h"

namespace baton {

PagedKvCache::PagedKvCache(const KvCacheShape& shape, Backend& backend)
    : shape_(shape), blocks_(shape.n_blocks) {
  if (shape.n_layers <= 0 || shape.n_kv_heads <= 0 || shape.head_dim <= 0 ||
      shape.block_size <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "invalid KV cache shape: layers " + std::to_string(shape.n_layers) + ", kv heads " +
                    std::to_string(shape.n_kv_heads) + ", head dim " +
                    std::to_string(shape.head_dim) + ", block size " +
                    std::to_string(shape.block_size));
  }
  const Shape pool = {shape.n_blocks, shape.block_size, shape.n_kv_heads, shape.head_dim};
  for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
    keys_.push_back(backend.allocate_tensor(DType::kF32, pool));
    values_.push_back(backend.allocate_tensor(DType::kF32, pool));
  }
}

bool PagedKvCache::reserve(SequenceBlocks& sequence, int32_t new_length) {
  const int32_t have = static_cast<int32_t>(sequence.block_table.size());
  const int32_t need = blocks_needed(new_length) - have;
  if (need <= 0) return true;
  if (need > blocks_.free_count()) return false;
  for (int32_t i = 0; i < need; ++i) sequence.block_table.push_back(*blocks_.allocate());
  return true;
}

void PagedKvCache::release(SequenceBlocks& sequence) {
  for (int32_t block : sequence.block_table) blocks_.release(block);
  sequence.block_table.clear();
  sequence.length = 0;
}

size_t PagedKvCache::bytes_per_token() const {
  return 2 * sizeof(float) * static_cast<size_t>(shape_.n_layers) * shape_.n_kv_heads *
         shape_.head_dim;
}

}  // namespace baton
