#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace baton {

// Identifies a full KV block by everything that determines its contents: the hash of the
// block before it, its tokens and the adapter in use. Equal keys mean equal K/V.
struct BlockKey {
  uint64_t hash = 0;
  std::vector<int32_t> tokens;  // kept to rule out hash collisions
  uint64_t adapter = 0;
  uint64_t parent = 0;
};

uint64_t chain_hash(uint64_t parent, std::span<const int32_t> tokens, uint64_t adapter);

// Full blocks whose K/V can be reused by any request with the same prefix (system-prompt
// caching). The cache only indexes blocks; the block manager decides when they are free: a
// cached block nobody references waits in an LRU list and is evicted only when the pool needs
// room.
class PrefixCache {
 public:
  std::optional<int32_t> find(const BlockKey& key) const;
  // Records that `block` holds `key`; a key already cached keeps its first block.
  void insert(const BlockKey& key, int32_t block);
  bool contains_block(int32_t block) const { return block_keys_.count(block) != 0; }

  // A cached block lost its last reference: it becomes evictable, most recent last.
  void park(int32_t block);
  // A parked block is in use again.
  void unpark(int32_t block);
  // Forgets the least recently parked block and returns it, or nullopt if none is parked.
  std::optional<int32_t> evict();
  int32_t parked_count() const { return static_cast<int32_t>(lru_.size()); }

 private:
  std::unordered_map<uint64_t, std::vector<std::pair<BlockKey, int32_t>>> by_hash_;
  std::unordered_map<int32_t, BlockKey> block_keys_;
  std::list<int32_t> lru_;
  std::unordered_map<int32_t, std::list<int32_t>::iterator> lru_position_;
};

}  // namespace baton
