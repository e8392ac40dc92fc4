#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

// Finds stop strings in streamed text. Text that could still be the start of a stop string is
// held back, so a client never sees part of a stop string that then completes.
class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  struct Result {
    std::string text;                 // safe to emit now
    std::optional<std::string> stop;  // the stop string that matched; generation ends here
  };
  Result push(std::string_view piece);
  // The held-back text, when generation ends for another reason.
  std::string flush();

 private:
  std::vector<std::string> stops_;
  std::string pending_;
};

}  // namespace baton
