#pragma once

// Where a text stands in a grammar: every way the text so far can go on, each a stack of the
// elements left in the alternatives it is inside (llama.cpp's formulation), plus the bytes of a
// character that a token boundary split. Copyable: parallel samples each take a copy.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/sampling/grammar.h"

namespace baton {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // Each function below throws Error(kInvalidArgument) where the grammar is too ambiguous or too
  // deep to follow within fixed bounds (kMaxStacks and the others in the .cpp).

  // Whether `bytes` can come next: they continue the text towards some sentence of the grammar
  // (a character left incomplete at their end counts when some continuation could complete it).
  bool accepts(std::string_view bytes) const;
  // Takes `bytes`; returns false, leaving the state as it was, when the grammar does not allow
  // them.
  bool advance(std::string_view bytes);
  // The text so far is a whole sentence of the grammar: generation may end here.
  bool complete() const;
  // Nothing may follow: generation must end here.
  bool finished() const;

 private:
  struct Position {
    int32_t rule, alternative, index;
    auto operator<=>(const Position&) const = default;
  };
  using Stack = std::vector<Position>;

 public:
  // A point in the text, for callers that try many continuations from it (the token mask).
  struct State {
    std::vector<Stack> stacks;  // sorted, without duplicates
    std::string pending;        // the bytes of a character not yet complete
    auto operator<=>(const State&) const = default;
  };
  const State& state() const { return state_; }
  // `state` after `bytes`, or false when the grammar does not allow them.
  bool feed(State& state, std::string_view bytes) const;
  // Whether some continuation of `state` is a sentence (a pending character may complete).
  bool could_complete(const State& state) const;

 private:
  struct Expansion;
  void expand(Stack start, std::vector<Stack>& out, Expansion& expansion) const;
  std::vector<Stack> step(const std::vector<Stack>& stacks, uint32_t code_point) const;
  // Sorts and deduplicates; throws Error(kInvalidArgument) past the bound on ways to go on.
  static void settle(std::vector<Stack>& stacks);

  std::shared_ptr<const Grammar> grammar_;
  State state_;
};

}  // namespace baton
