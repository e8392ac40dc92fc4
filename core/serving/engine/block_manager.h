#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/serving/engine/prefix_cache.h"
#include "core/serving/kv_cache/block_allocator.h"

namespace baton {

// The KV blocks of one sequence: its block table and the chain hash of each full block whose
// contents are known (for the prefix cache).
struct BlockTable {
  std::vector<int32_t> blocks;
  std::vector<uint64_t> full_block_hashes;
};

// Allocation policy over the paged KV pool: reference-counted blocks shared between sequences
// (parallel samples, beams) and, when enabled, reused across requests through the prefix
// cache. Cached blocks that no sequence references stay resident until the pool needs room.
class BlockManager {
 public:
  BlockManager(int32_t n_blocks, int32_t block_size, bool prefix_caching);

  int32_t block_size() const { return block_size_; }
  int32_t total_blocks() const { return allocator_.total(); }
  // Blocks that new work can get: free ones plus unreferenced cached ones.
  int32_t available_blocks() const;
  int32_t blocks_for(int32_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }

  // Points `table` at the cached blocks of the longest cached prefix of `tokens`, in whole
  // blocks and at most `max_tokens` tokens; returns how many tokens that covers. `table` must
  // be empty.
  int32_t reuse_prefix(std::span<const int32_t> tokens, int32_t max_tokens, uint64_t adapter,
                       BlockTable& table);
  // Extends `table` to hold `tokens` tokens. Returns false, changing nothing, if the pool
  // cannot supply the blocks.
  bool grow(BlockTable& table, int32_t tokens);
  // Offers the full blocks among the first `computed` tokens to the prefix cache.
  void cache_full_blocks(std::span<const int32_t> tokens, int32_t computed, uint64_t adapter,
                         BlockTable& table);
  // Another holder of the same blocks (a forked sample or beam).
  BlockTable share(const BlockTable& table);
  // Replaces a shared block at `index` with a fresh one the caller may write; returns the
  // (source, destination) pair whose contents the caller must copy, or nullopt if the block was
  // not shared. Throws Error(kOutOfMemory) when no block is available.
  std::optional<std::pair<int32_t, int32_t>> make_writable(BlockTable& table, size_t index);
  void release(BlockTable& table);

  int32_t ref_count(int32_t block) const { return allocator_.ref_count(block); }
  int64_t prefix_query_tokens() const { return query_tokens_; }
  int64_t prefix_hit_tokens() const { return hit_tokens_; }

 private:
  std::optional<int32_t> take_block();
  void drop(int32_t block);

  int32_t block_size_;
  bool prefix_caching_;
  BlockAllocator allocator_;
  PrefixCache cache_;
  int64_t query_tokens_ = 0;
  int64_t hit_tokens_ = 0;
};

}  // namespace baton
