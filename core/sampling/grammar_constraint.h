#pragma once

// A grammar applied to sampling: which tokens may come next, and the matcher moved on by the
// token chosen.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/sampling/grammar_matcher.h"
#include "core/tokenizer/tokenizer.h"

namespace baton {

// A vocabulary as a grammar sees it, built once per tokenizer.
struct TokenPieces {
  std::vector<std::string> pieces;  // each token's text; empty for control tokens
  std::vector<int32_t> end_tokens;  // end of generation: allowed only where the text is complete
  // The tokens with text, ordered by it: neighbours share prefixes, which the mask checks once.
  std::vector<int32_t> by_text;

  static std::shared_ptr<const TokenPieces> of(const Tokenizer& tokenizer);
  static std::shared_ptr<const TokenPieces> from(std::vector<std::string> pieces,
                                                 std::vector<int32_t> end_tokens);
};

class GrammarConstraint {
 public:
  // With `may_end` false (ignore_eos), end-of-generation tokens are never allowed; generation
  // then ends when the grammar allows nothing more. `stop_tokens` (a request's stop_token_ids)
  // are allowed where the text is complete, as end tokens are.
  GrammarConstraint(std::shared_ptr<const Grammar> grammar,
                    std::shared_ptr<const TokenPieces> pieces, bool may_end,
                    std::vector<int32_t> stop_tokens = {});

  // allowed[id] != 0 for every token that may come next.
  void allowed(std::vector<char>& allowed);
  // Moves past `token`, which allowed() must have allowed.
  void accept(int32_t token);
  // Nothing may follow the text so far.
  bool finished() const { return matcher_.finished(); }

 private:
  void compute(std::vector<char>& allowed) const;

  GrammarMatcher matcher_;
  // Masks by the matcher's state, a bit per token: a generation comes back to the same state
  // often (each character inside a string, each item of a list), and the mask depends on
  // nothing else that changes.
  std::map<GrammarMatcher::State, std::vector<uint64_t>> masks_;
  std::shared_ptr<const TokenPieces> pieces_;
  bool may_end_;
  std::vector<int32_t> stop_tokens_;
};

}  // namespace baton
