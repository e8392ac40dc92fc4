// GrammarElement's tests of code points against its character class (grammar.h).
#include "core/serving/sampling/grammar.h"

#include <algorithm>

namespace baton {

bool GrammarElement::matches(uint32_t code_point) const {
  const bool inside = std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) {
    return r.first <= code_point && code_point <= r.second;
  });
  return inside != negated;
}

bool GrammarElement::matches_any(uint32_t low, uint32_t high) const {
  if (!negated) {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const auto& r) { return r.first <= high && low <= r.second; });
  }
  // Some code point of [low, high] is outside every range unless the ranges cover it all.
  for (uint32_t next = low;;) {
    const auto covering = std::find_if(ranges.begin(), ranges.end(), [&](const auto& r) {
      return r.first <= next && next <= r.second;
    });
    if (covering == ranges.end()) return true;
    if (covering->second >= high) return false;
    next = covering->second + 1;
  }
}

}  // namespace baton
