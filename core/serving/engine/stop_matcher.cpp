#include "core/serving/engine/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace baton {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopMatcher::Result StopMatcher::push(std::string_view piece) {
  pending_ += piece;
  if (stops_.empty()) return {std::exchange(pending_, {}), std::nullopt};
  size_t first_match = std::string::npos;
  const std::string* matched = nullptr;
  for (const std::string& stop : stops_) {
    const size_t at = pending_.find(stop);
    if (at < first_match) {
      first_match = at;
      matched = &stop;
    }
  }
  if (matched) {
    Result result{pending_.substr(0, first_match), *matched};
    pending_.clear();
    return result;
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& stop : stops_) {
    for (size_t n = std::min(stop.size() - 1, pending_.size()); n > hold; --n) {
      if (pending_.compare(pending_.size() - n, n, stop, 0, n) == 0) {
        hold = n;
        break;
      }
    }
  }
  Result result{pending_.substr(0, pending_.size() - hold), std::nullopt};
  pending_.erase(0, pending_.size() - hold);
  return result;
}

std::string StopMatcher::flush() {
  return std::exchange(pending_, {});
}

}  // namespace baton
