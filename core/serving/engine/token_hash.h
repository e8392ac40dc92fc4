#pragma once

#include <cstdint>

namespace baton {

// One step of hashing a token stream: splitmix64's finaliser over the running state and the
// next value. Cheap, and well spread for token ids (prefix-cache keys, length-predictor keys).
inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

}  // namespace baton
