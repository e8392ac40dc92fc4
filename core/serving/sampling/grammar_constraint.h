#pragma once

// A grammar applied to sampling: which tokens may come next, and the matcher moved on by the
// token chosen.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/formats/tokenizer/tokenizer.h"
#include "core/serving/sampling/grammar_matcher.h"

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

// Text-token masks by matcher state, a bit per token: a generation comes back to the same state
// often (each item of a list, each property of an object), and so do other requests with the
// same grammar; the mask depends on nothing else. Dropped whole past its byte budget.
class MaskCache {
 public:
  explicit MaskCache(size_t budget_bytes) : budget_bytes_(budget_bytes) {}
  const std::vector<uint64_t>* find(const GrammarMatcher::State& state) const;
  void add(const GrammarMatcher::State& state, std::vector<uint64_t> bits);

 private:
  std::map<GrammarMatcher::State, std::vector<uint64_t>> masks_;
  size_t bytes_ = 0;
  size_t budget_bytes_;
};

// What the requests of one grammar on one vocabulary share (the engine keeps one per grammar
// text): the grammar, its interned stacks and the masks of their states. States are comparable
// only within one stack table, so the two go together. Used from one thread at a time.
struct SharedGrammar {
  std::shared_ptr<const Grammar> grammar;
  std::shared_ptr<GrammarMatcher::StackTable> stacks;
  std::shared_ptr<MaskCache> masks;

  static SharedGrammar create(std::shared_ptr<const Grammar> grammar, size_t mask_budget_bytes);
};

class GrammarConstraint {
 public:
  // With `may_end` false (ignore_eos), end-of-generation tokens are never allowed; generation
  // then ends when the grammar allows nothing more. `stop_tokens` (a request's stop_token_ids)
  // are allowed where the text is complete, as end tokens are. The first form keeps its tables
  // to itself (and the copies made of it).
  GrammarConstraint(std::shared_ptr<const Grammar> grammar,
                    std::shared_ptr<const TokenPieces> pieces, bool may_end,
                    std::vector<int32_t> stop_tokens = {});
  GrammarConstraint(const SharedGrammar& shared, std::shared_ptr<const TokenPieces> pieces,
                    bool may_end, std::vector<int32_t> stop_tokens = {});

  // allowed[id] != 0 for every token that may come next.
  void allowed(std::vector<char>& allowed);
  // Computes the text mask of the current state ahead of allowed(), which then only unpacks
  // it: the engine calls this on a thread of its own while the model computes the logits the
  // mask will apply to. Throws what allowed() would throw.
  void prepare();
  // Moves past `token`, which allowed() must have allowed.
  void accept(int32_t token);
  // Nothing may follow the text so far.
  bool finished() const { return matcher_.finished(); }

 private:
  // The text tokens (not the end and stop tokens) the state allows, a bit per token.
  std::vector<uint64_t> text_mask() const;

  GrammarMatcher matcher_;
  std::optional<std::vector<uint64_t>> prepared_;  // the text mask of the matcher's state
  std::shared_ptr<MaskCache> masks_;               // keyed by states of matcher_'s stack table
  std::shared_ptr<const TokenPieces> pieces_;
  bool may_end_;
  std::vector<int32_t> stop_tokens_;
};

}  // namespace baton
