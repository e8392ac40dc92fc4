#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

// One compiled PCRE2 pattern (UTF mode, Unicode properties) that cuts text into pieces: each
// match is a piece and so is each run of text between matches, so nothing is ever dropped.
// Immutable after construction and safe to share between threads.
class RegexSplitter {
 public:
  // Throws Error(kInternal) naming the pattern when PCRE2 rejects it.
  explicit RegexSplitter(std::string pattern);

  // Appends the pieces of `text` (views into it) to `pieces`. `text` must be valid UTF-8.
  // Lookarounds and anchors see only `text`, not whatever surrounds it.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<void> code_;  // pcre2_code_8, freed with pcre2_code_free_8
};

}  // namespace baton
