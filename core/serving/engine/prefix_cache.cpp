#include "core/serving/engine/prefix_cache.h"

#include <algorithm>

#include "core/serving/engine/token_hash.h"

namespace baton {
namespace {

bool same_contents(const BlockKey& a, const BlockKey& b) {
  return a.parent == b.parent && a.adapter == b.adapter && a.tokens == b.tokens;
}

}  // namespace

uint64_t chain_hash(uint64_t parent, std::span<const int32_t> tokens, uint64_t adapter) {
  uint64_t h = hash_mix(parent, adapter);
  for (int32_t t : tokens) h = hash_mix(h, static_cast<uint32_t>(t));
  return h;
}

std::optional<int32_t> PrefixCache::find(const BlockKey& key) const {
  const auto it = by_hash_.find(key.hash);
  if (it == by_hash_.end()) return std::nullopt;
  for (const auto& [stored, block] : it->second) {
    if (same_contents(stored, key)) return block;
  }
  return std::nullopt;
}

void PrefixCache::insert(const BlockKey& key, int32_t block) {
  if (find(key) || contains_block(block)) return;
  by_hash_[key.hash].emplace_back(key, block);
  block_keys_.emplace(block, key);
}

void PrefixCache::park(int32_t block) {
  if (!contains_block(block) || lru_position_.count(block)) return;
  lru_.push_back(block);
  lru_position_[block] = std::prev(lru_.end());
}

void PrefixCache::unpark(int32_t block) {
  const auto it = lru_position_.find(block);
  if (it == lru_position_.end()) return;
  lru_.erase(it->second);
  lru_position_.erase(it);
}

std::optional<int32_t> PrefixCache::evict() {
  if (lru_.empty()) return std::nullopt;
  const int32_t block = lru_.front();
  unpark(block);
  const BlockKey key = block_keys_.at(block);
  block_keys_.erase(block);
  auto& bucket = by_hash_[key.hash];
  std::erase_if(bucket, [&](const auto& entry) { return entry.second == block; });
  if (bucket.empty()) by_hash_.erase(key.hash);
  return block;
}

}  // namespace baton
