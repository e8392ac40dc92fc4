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

#include "core/serving/sampling/grammar.h"

namespace baton {

class GrammarMatcher {
  struct Position {
    int32_t rule, alternative, index;
  };
  // A stack as a linked list from its top, shared with every stack below the same tail.
  struct Node {
    Position top;
    int32_t below;  // kEmpty at the bottom
    int32_t depth;  // nodes down to the bottom, this one included
  };
  struct NodeKey {
    uint64_t top;  // rule, alternative and index packed
    int32_t below;
    bool operator==(const NodeKey&) const = default;
  };
  struct NodeKeyHash {
    size_t operator()(const NodeKey& key) const;
  };
  struct SetHash {
    size_t operator()(const std::vector<int32_t>& stacks) const;
  };

 public:
  // The interned stacks of one grammar, the sets of them that states hold, and the moves
  // between sets already made (a set and a character give one set): the token mask tries the
  // same moves for many tokens and many steps, and each is then a lookup. Matchers that share a
  // table (a request's parallel samples, and requests of the same grammar: SharedGrammar) have
  // comparable states, so masks computed for one serve the others. Used from one thread at a
  // time (the engine's).
  class StackTable {
   public:
    // Stacks, and stack ids in sets, held: what names states, which only compaction drops (the
    // moves are a cache, dropped whole past their own bound).
    size_t size() const { return nodes_.size() + set_entries_; }
    // Half way to the size at which matchers move off it: time for new users to take a fresh
    // table, so that they keep sharing one.
    bool crowded() const;

   private:
    friend class GrammarMatcher;
    std::vector<Node> nodes_;
    std::unordered_map<NodeKey, int32_t, NodeKeyHash> ids_;
    std::vector<std::vector<int32_t>> sets_;  // sorted stack ids, by set id
    std::unordered_map<std::vector<int32_t>, int32_t, SetHash> set_ids_;
    size_t set_entries_ = 0;                       // stack ids over all sets
    std::unordered_map<uint64_t, int32_t> moves_;  // set id << 21 | code point: set id
  };

  // A fresh table unless `table` (one made for the same grammar) is given.
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar,
                          std::shared_ptr<StackTable> table = nullptr);

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

  // A point in the text, for callers that try many continuations from it (the token mask):
  // the id of its set of stacks in the table (a stack kEmpty is a sentence complete), so a
  // state is cheap to copy and compare; ids are the table's own.
  struct State {
    int32_t stacks = 0;   // a set id
    std::string pending;  // the bytes of a character not yet complete
    auto operator<=>(const State&) const = default;
  };
  const State& state() const { return state_; }
  // `state` after `bytes`, or false when the grammar does not allow them.
  bool feed(State& state, std::string_view bytes) const;
  // Whether some continuation of `state` is a sentence (a pending character may complete).
  bool could_complete(const State& state) const;
  // Interning keeps every stack met, the token mask's trials included: past a bound this moves
  // the current state to a table of its own, renumbered. Returns whether it did, which makes
  // earlier State values (and anything keyed by them) meaningless here.
  bool compact();
  const std::shared_ptr<StackTable>& table() const { return table_; }

 private:
  static constexpr int32_t kEmpty = -1;
  struct Expansion;

  int32_t intern(Position top, int32_t below) const;
  // The id of `stacks` (settled: sorted and unique).
  int32_t intern_set(std::vector<int32_t> stacks) const;
  const std::vector<int32_t>& stacks_of(int32_t set) const { return table_->sets_[set]; }
  void expand(int32_t start, std::vector<int32_t>& out, Expansion& expansion) const;
  // The set after `code_point` (empty when nothing goes on), from the table's moves when made.
  int32_t step(int32_t set, uint32_t code_point) const;
  const GrammarElement& element(const Position& p) const;
  // Sorts and deduplicates; throws Error(kInvalidArgument) past the bound on ways to go on.
  static void settle(std::vector<int32_t>& stacks);

  std::shared_ptr<const Grammar> grammar_;
  // Grows in const calls too (feed tries continuations): interning is a cache of stack values.
  std::shared_ptr<StackTable> table_;
  State state_;
};

}  // namespace baton
