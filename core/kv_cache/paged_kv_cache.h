#pragma once

#include <cstdint>
#include <vector>

#include "core/backend.h"
#include "core/kv_cache/block_allocator.h"

namespace baton {

struct KvCacheShape {
  int32_t n_layers = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_size = 16;  // tokens per block
  int32_t n_blocks = 0;
};

// The block table of one sequence and how many of its tokens have K/V stored.
struct SequenceBlocks {
  std::vector<int32_t> block_table;
  int32_t length = 0;
};

// One pool of fixed-size blocks per layer for keys and values, on the backend that runs the
// model: each layer's K and V are [n_blocks, block_size, n_kv_heads, head_dim]. Sequences own
// blocks through their block tables; attention reads K/V through those tables.
class PagedKvCache {
 public:
  PagedKvCache(const KvCacheShape& shape, Backend& backend);

  const KvCacheShape& shape() const { return shape_; }
  const Tensor& keys(int32_t layer) const { return keys_.at(layer); }
  const Tensor& values(int32_t layer) const { return values_.at(layer); }
  BlockAllocator& blocks() { return blocks_; }
  const BlockAllocator& blocks() const { return blocks_; }

  // Grows the sequence's block table to hold `new_length` tokens. Returns false, changing
  // nothing, when the pool has too few free blocks.
  bool reserve(SequenceBlocks& sequence, int32_t new_length);
  // Gives back every block of the sequence and empties it.
  void release(SequenceBlocks& sequence);

  int32_t blocks_needed(int32_t tokens) const {
    return (tokens + shape_.block_size - 1) / shape_.block_size;
  }
  size_t bytes_per_token() const;

 private:
  KvCacheShape shape_;
  BlockAllocator blocks_;
  std::vector<Tensor> keys_;
  std::vector<Tensor> values_;
};

}  // namespace baton
