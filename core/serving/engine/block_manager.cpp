#include "core/serving/engine/block_manager.h"

#include "baton/error.h"

namespace baton {

BlockManager::BlockManager(int32_t n_blocks, int32_t block_size, bool prefix_caching)
    : block_size_(block_size), prefix_caching_(prefix_caching), allocator_(n_blocks) {
  if (block_size <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "KV block size must be positive, got " + std::to_string(block_size));
  }
}

int32_t BlockManager::available_blocks() const {
  return allocator_.free_count() + cache_.parked_count();
}

std::optional<int32_t> BlockManager::take_block() {
  if (auto block = allocator_.allocate()) return block;
  const std::optional<int32_t> evicted = cache_.evict();
  if (!evicted) return std::nullopt;
  // An evicted block had no holders; it is reused in place with a fresh reference.
  allocator_.reattach(*evicted);
  return evicted;
}

void BlockManager::drop(int32_t block) {
  if (allocator_.ref_count(block) == 1 && cache_.contains_block(block)) {
    // Keep the contents for future requests: the block stays allocated, parked in the LRU.
    allocator_.detach(block);
    cache_.park(block);
    return;
  }
  allocator_.release(block);
}

int32_t BlockManager::reuse_prefix(std::span<const int32_t> tokens, int32_t max_tokens,
                                   uint64_t adapter, BlockTable& table) {
  query_tokens_ += static_cast<int64_t>(tokens.size());
  if (!prefix_caching_) return 0;
  uint64_t parent = 0;
  int32_t covered = 0;
  while (covered + block_size_ <= max_tokens) {
    const std::span<const int32_t> block_tokens = tokens.subspan(covered, block_size_);
    BlockKey key{chain_hash(parent, block_tokens, adapter),
                 std::vector<int32_t>(block_tokens.begin(), block_tokens.end()), adapter, parent};
    const std::optional<int32_t> block = cache_.find(key);
    if (!block) break;
    if (allocator_.ref_count(*block) == 0) {
      cache_.unpark(*block);
      allocator_.reattach(*block);
    } else {
      allocator_.retain(*block);
    }
    table.blocks.push_back(*block);
    table.full_block_hashes.push_back(key.hash);
    parent = key.hash;
    covered += block_size_;
  }
  hit_tokens_ += covered;
  return covered;
}

bool BlockManager::grow(BlockTable& table, int32_t tokens) {
  const int32_t need = blocks_for(tokens) - static_cast<int32_t>(table.blocks.size());
  if (need <= 0) return true;
  if (need > available_blocks()) return false;
  for (int32_t i = 0; i < need; ++i) table.blocks.push_back(*take_block());
  return true;
}

void BlockManager::cache_full_blocks(std::span<const int32_t> tokens, int32_t computed,
                                     uint64_t adapter, BlockTable& table) {
  if (!prefix_caching_) return;
  const size_t full = static_cast<size_t>(computed / block_size_);
  while (table.full_block_hashes.size() < full &&
         table.full_block_hashes.size() < table.blocks.size()) {
    const size_t i = table.full_block_hashes.size();
    const uint64_t parent = i == 0 ? 0 : table.full_block_hashes[i - 1];
    const std::span<const int32_t> block_tokens = tokens.subspan(i * block_size_, block_size_);
    BlockKey key{chain_hash(parent, block_tokens, adapter),
                 std::vector<int32_t>(block_tokens.begin(), block_tokens.end()), adapter, parent};
    table.full_block_hashes.push_back(key.hash);
    cache_.insert(key, table.blocks[i]);
  }
}

BlockTable BlockManager::share(const BlockTable& table) {
  for (int32_t block : table.blocks) allocator_.retain(block);
  return table;
}

std::optional<std::pair<int32_t, int32_t>> BlockManager::make_writable(BlockTable& table,
                                                                       size_t index) {
  const int32_t old_block = table.blocks.at(index);
  // Only partial blocks are ever written, and the prefix cache holds only full ones, so a block
  // needs a private copy exactly when another sequence holds it too.
  if (allocator_.ref_count(old_block) <= 1) return std::nullopt;
  const std::optional<int32_t> fresh = take_block();
  if (!fresh) {
    throw Error(ErrorCategory::kOutOfMemory, "no free KV block for a copy-on-write");
  }
  drop(old_block);
  table.blocks[index] = *fresh;
  table.full_block_hashes.resize(std::min(table.full_block_hashes.size(), index));
  return std::make_pair(old_block, *fresh);
}

void BlockManager::release(BlockTable& table) {
  for (int32_t block : table.blocks) drop(block);
  table.blocks.clear();
  table.full_block_hashes.clear();
}

}  // namespace baton
