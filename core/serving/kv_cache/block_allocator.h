#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace baton {

// Hands out KV-cache block ids from a fixed pool. Blocks are reference counted so that
// sequences can share blocks (parallel samples, beams, cached prefixes); a block returns to the
// free list when its last holder releases it.
class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t n_blocks);

  // A free block with a reference count of one, or nullopt when the pool is exhausted.
  std::optional<int32_t> allocate();
  void retain(int32_t block);
  void release(int32_t block);
  // Drops a reference without returning the block to the free list when it reaches zero: the
  // caller keeps the block's contents (the prefix cache) and later either reattaches it or
  // reuses it for something else by reattaching.
  void detach(int32_t block);
  // Gives a detached block with no references its first reference again.
  void reattach(int32_t block);

  int32_t ref_count(int32_t block) const;
  int32_t total() const { return static_cast<int32_t>(ref_counts_.size()); }
  int32_t free_count() const { return static_cast<int32_t>(free_.size()); }

 private:
  void check(int32_t block) const;

  std::vector<int32_t> ref_counts_;
  std::vector<int32_t> free_;  // a stack: recently freed blocks are reused first (warm in cache)
};

}  // namespace baton
