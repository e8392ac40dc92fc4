#pragma once

// Where a text stands in a grammar: every way the text so far can go on, each a stack of the
// elements left in the alternatives it is inside (llama.cpp's formulation), plus the bytes of a
// character that a token boundary split. Stacks are interned, so that moving one on allocates
// nothing and states compare as lists of ids. Copyable: parallel samples each take a copy.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
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

  // A point in the text, for callers that try many continuations from it (the token mask).
  // Stacks are ids of interned stacks (kEmpty: the empty stack, a sentence complete), so a
  // state is cheap to copy and compare; ids are this matcher's own.
  struct State {
    std::vector<int32_t> stacks;  // sorted, without duplicates
    std::string pending;          // the bytes of a character not yet complete
    auto operator<=>(const State&) const = default;
  };
  const State& state() const { return state_; }
  // `state` after `bytes`, or false when the grammar does not allow them.
  bool feed(State& state, std::string_view bytes) const;
  // Whether some continuation of `state` is a sentence (a pending character may complete).
  bool could_complete(const State& state) const;
  // Interning keeps every stack met, the token mask's trials included: past a bound this drops
  // all but the current state's, renumbering them. Returns whether it did, which makes earlier
  // State values (and anything keyed by them) meaningless.
  bool compact();

 private:
  struct Position {
    int32_t rule, alternative, index;
  };
  // A stack as a linked list from its top, shared with every stack below the same tail.
  struct Node {
    Position top;
    int32_t below;  // kEmpty at the bottom
    int32_t depth;  // nodes down to the bottom, this one included
  };
  static constexpr int32_t kEmpty = -1;
  struct NodeKey {
    uint64_t top;  // rule, alternative and index packed
    int32_t below;
    bool operator==(const NodeKey&) const = default;
  };
  struct NodeKeyHash {
    size_t operator()(const NodeKey& key) const;
  };
  struct Interned {
    std::vector<Node> nodes;
    std::unordered_map<NodeKey, int32_t, NodeKeyHash> ids;
  };
  struct Expansion;

  int32_t intern(Position top, int32_t below) const;
  void expand(int32_t start, std::vector<int32_t>& out, Expansion& expansion) const;
  std::vector<int32_t> step(const std::vector<int32_t>& stacks, uint32_t code_point) const;
  const GrammarElement& element(const Position& p) const;
  // Sorts and deduplicates; throws Error(kInvalidArgument) past the bound on ways to go on.
  static void settle(std::vector<int32_t>& stacks);

  std::shared_ptr<const Grammar> grammar_;
  // Grows in const calls (feed tries continuations): interning is a cache of stack values.
  mutable Interned interned_;
  State state_;
};

}  // namespace baton
