#include "core/serving/kv_cache/block_allocator.h"

#include <string>

#include "baton/error.h"

namespace baton {

BlockAllocator::BlockAllocator(int32_t n_blocks) {
  if (n_blocks <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a KV cache needs at least one block, got " + std::to_string(n_blocks));
  }
  ref_counts_.assign(n_blocks, 0);
  free_.reserve(n_blocks);
  for (int32_t b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

std::optional<int32_t> BlockAllocator::allocate() {
  if (free_.empty()) return std::nullopt;
  const int32_t block = free_.back();
  free_.pop_back();
  ref_counts_[block] = 1;
  return block;
}

void BlockAllocator::check(int32_t block) const {
  if (block < 0 || block >= total() || ref_counts_[block] == 0) {
    throw Error(ErrorCategory::kInternal,
                "KV block " + std::to_string(block) + " is not allocated");
  }
}

void BlockAllocator::retain(int32_t block) {
  check(block);
  ++ref_counts_[block];
}

void BlockAllocator::release(int32_t block) {
  check(block);
  if (--ref_counts_[block] == 0) free_.push_back(block);
}

void BlockAllocator::detach(int32_t block) {
  check(block);
  --ref_counts_[block];
}

void BlockAllocator::reattach(int32_t block) {
  if (block < 0 || block >= total() || ref_counts_[block] != 0) {
    throw Error(ErrorCategory::kInternal,
                "KV block " + std::to_string(block) + " cannot be reattached");
  }
  ref_counts_[block] = 1;
}

int32_t BlockAllocator::ref_count(int32_t block) const {
  return block >= 0 && block < total() ? ref_counts_[block] : 0;
}

}  // namespace baton
