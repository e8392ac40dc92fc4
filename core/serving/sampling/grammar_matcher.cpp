#include "core/serving/sampling/grammar_matcher.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>

#include "baton/error.h"
#include "core/formats/tokenizer/utf8.h"

namespace baton {
namespace {

// The code points a UTF-8 prefix (a lead byte and fewer continuation bytes than it announces)
// can still become: the rest filled with the smallest and the largest continuation bytes.
std::pair<uint32_t, uint32_t> completions_of(std::string_view prefix) {
  const size_t length = utf8::sequence_length(prefix.front());
  const auto lead = static_cast<uint8_t>(prefix.front());
  uint32_t value = lead & (0x7Fu >> length);
  for (size_t i = 1; i < prefix.size(); ++i) {
    value = value << 6 | (static_cast<uint8_t>(prefix[i]) & 0x3Fu);
  }
  uint32_t low = value, high = value;
  for (size_t i = prefix.size(); i < length; ++i) {
    low = low << 6;
    high = high << 6 | 0x3Fu;
  }
  // The smallest value of each length: below it the encoding would be overlong, not UTF-8.
  constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  low = std::max(low, kSmallest[length]);
  // ED A0..BF would be a surrogate, which UTF-8 excludes.
  if (lead == 0xED) high = std::min<uint32_t>(high, 0xD7FF);
  return {low, std::min<uint32_t>(high, 0x10FFFF)};
}

}  // namespace

// A grammar is untrusted input (a server takes it from any client), and an ambiguous one can
// have exponentially many ways to go on: these bound the work one state or step may take. Past
// them the grammar is refused with an error, never left to exhaust the thread or its memory.
constexpr size_t kMaxStacks = 1024;       // ways to go on after one character
constexpr size_t kMaxExpansions = 65536;  // rule references opened for one character
constexpr int32_t kMaxDepth = 1024;       // rules inside rules
// Until this many references are opened in one step, stacks met twice are just expanded twice
// (cheaper than remembering them); past it, each is expanded once.
constexpr size_t kRememberAfter = 256;
// Stacks and stack ids in sets kept before compact() moves a matcher to a table of its own,
// and moves kept before they are dropped: each costs at most about 50 bytes with its index, so
// a table holds about 20 MiB. A vocabulary's walk from one state makes up to a move per byte of
// its token texts that the walk does not share (about 100,000 for 32k tokens).
constexpr size_t kCompactAfter = size_t{1} << 18;
constexpr size_t kMaxMoves = size_t{1} << 17;

struct GrammarMatcher::Expansion {
  size_t opened = 0;
  std::unordered_set<int32_t> seen;
};

bool GrammarMatcher::StackTable::crowded() const {
  return size() > kCompactAfter / 2;
}

size_t GrammarMatcher::NodeKeyHash::operator()(const NodeKey& key) const {
  uint64_t h = key.top * 0x9e37'79b9'7f4a'7c15ull ^ static_cast<uint32_t>(key.below);
  h ^= h >> 29;
  return static_cast<size_t>(h * 0xbf58'476d'1ce4'e5b9ull);
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar,
                               std::shared_ptr<StackTable> table)
    : grammar_(std::move(grammar)),
      table_(table ? std::move(table) : std::make_shared<StackTable>()) {
  Expansion expansion;
  std::vector<int32_t> stacks;
  const auto& root = grammar_->rules[grammar_->root];
  for (size_t alternative = 0; alternative < root.size(); ++alternative) {
    expand(intern({grammar_->root, static_cast<int32_t>(alternative), 0}, kEmpty), stacks,
           expansion);
  }
  settle(stacks);
  state_.stacks = intern_set(std::move(stacks));
}

size_t GrammarMatcher::SetHash::operator()(const std::vector<int32_t>& stacks) const {
  uint64_t h = 0xcbf2'9ce4'8422'2325ull;
  for (const int32_t stack : stacks) h = (h ^ static_cast<uint32_t>(stack)) * 0x100'0000'01b3ull;
  return static_cast<size_t>(h);
}

int32_t GrammarMatcher::intern_set(std::vector<int32_t> stacks) const {
  const auto [it, added] =
      table_->set_ids_.try_emplace(stacks, static_cast<int32_t>(table_->sets_.size()));
  if (added) {
    table_->set_entries_ += stacks.size() + 1;  // an empty set still takes an entry
    table_->sets_.push_back(std::move(stacks));
  }
  return it->second;
}

const GrammarElement& GrammarMatcher::element(const Position& p) const {
  return grammar_->rules[p.rule][p.alternative][p.index];
}

// The parser bounds rules to 4096, and alternatives and elements to 100,000: 16, 24 and 24 bits.
int32_t GrammarMatcher::intern(Position top, int32_t below) const {
  const NodeKey key{static_cast<uint64_t>(top.rule) << 48 |
                        static_cast<uint64_t>(top.alternative) << 24 |
                        static_cast<uint64_t>(top.index),
                    below};
  const auto [it, added] =
      table_->ids_.try_emplace(key, static_cast<int32_t>(table_->nodes_.size()));
  if (added) {
    const int32_t depth = below == kEmpty ? 1 : table_->nodes_[below].depth + 1;
    table_->nodes_.push_back({top, below, depth});
  }
  return it->second;
}

void GrammarMatcher::settle(std::vector<int32_t>& stacks) {
  std::ranges::sort(stacks);
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.size() > kMaxStacks) {
    throw Error(ErrorCategory::kInvalidArgument, "the grammar is too ambiguous: more than " +
                                                     std::to_string(kMaxStacks) +
                                                     " ways to go on after one character");
  }
}

// Pops finished alternatives and opens rule references until the top is a character class (or
// the stack is empty: the grammar is satisfied); a reference to a rule of k alternatives gives k
// stacks. The grammar has no left recursion (parse_gbnf refuses it), so this ends; the bounds
// keep it short.
void GrammarMatcher::expand(int32_t start, std::vector<int32_t>& out, Expansion& expansion) const {
  std::vector<int32_t> work{start};
  while (!work.empty()) {
    int32_t stack = work.back();
    work.pop_back();
    while (stack != kEmpty) {
      const Position& top = table_->nodes_[stack].top;
      if (top.index < static_cast<int32_t>(grammar_->rules[top.rule][top.alternative].size())) {
        break;
      }
      stack = table_->nodes_[stack].below;
    }
    if (stack == kEmpty || !element(table_->nodes_[stack].top).is_rule()) {
      out.push_back(stack);
      continue;
    }
    if (++expansion.opened > kRememberAfter && !expansion.seen.insert(stack).second) continue;
    if (expansion.opened > kMaxExpansions || table_->nodes_[stack].depth >= kMaxDepth) {
      throw Error(ErrorCategory::kInvalidArgument,
                  expansion.opened > kMaxExpansions
                      ? "the grammar is too ambiguous: more than " +
                            std::to_string(kMaxExpansions) + " rules to open for one character"
                      : "the grammar nests rules deeper than " + std::to_string(kMaxDepth));
    }
    // What follows the reference, then the referenced rule above it; a reference at the end
    // of its alternative leaves nothing below, which keeps repetitions' stacks short.
    const Node node = table_->nodes_[stack];
    const GrammarAlternative& alternative = grammar_->rules[node.top.rule][node.top.alternative];
    const int32_t rule = alternative[node.top.index].rule;
    const int32_t below =
        node.top.index + 1 == static_cast<int32_t>(alternative.size())
            ? node.below
            : intern({node.top.rule, node.top.alternative, node.top.index + 1}, node.below);
    const auto count = static_cast<int32_t>(grammar_->rules[rule].size());
    for (int32_t k = 0; k < count; ++k) work.push_back(intern({rule, k, 0}, below));
  }
}

int32_t GrammarMatcher::step(int32_t set, uint32_t code_point) const {
  const uint64_t move = static_cast<uint64_t>(set) << 21 | code_point;
  if (const auto it = table_->moves_.find(move); it != table_->moves_.end()) return it->second;
  const std::vector<int32_t> stacks = stacks_of(set);  // a copy: interning may move the sets
  std::vector<int32_t> next;
  Expansion expansion;
  for (const int32_t stack : stacks) {
    if (stack == kEmpty) continue;
    const Node node = table_->nodes_[stack];
    if (!element(node.top).matches(code_point)) continue;
    expand(intern({node.top.rule, node.top.alternative, node.top.index + 1}, node.below), next,
           expansion);
  }
  settle(next);
  const int32_t result = intern_set(std::move(next));
  if (table_->moves_.size() >= kMaxMoves) table_->moves_.clear();
  table_->moves_.emplace(move, result);
  return result;
}

bool GrammarMatcher::feed(State& state, std::string_view bytes) const {
  for (const char byte : bytes) {
    state.pending.push_back(byte);
    if (utf8::valid_length(state.pending, 0) == state.pending.size()) {
      size_t pos = 0;
      const char32_t code_point = utf8::decode(state.pending, pos);
      state.pending.clear();
      state.stacks = step(state.stacks, code_point);
      if (stacks_of(state.stacks).empty()) return false;
    } else if (!utf8::is_incomplete_prefix(state.pending, 0)) {
      return false;  // not UTF-8, which no grammar over code points matches
    }
  }
  return true;
}

bool GrammarMatcher::could_complete(const State& state) const {
  if (state.pending.empty()) return !stacks_of(state.stacks).empty();
  // A pair, not a structured binding: clang 14 does not let lambdas capture those.
  const std::pair<uint32_t, uint32_t> range = completions_of(state.pending);
  return std::ranges::any_of(stacks_of(state.stacks), [&](int32_t stack) {
    return stack != kEmpty &&
           element(table_->nodes_[stack].top).matches_any(range.first, range.second);
  });
}

bool GrammarMatcher::accepts(std::string_view bytes) const {
  State state = state_;
  return feed(state, bytes) && could_complete(state);
}

bool GrammarMatcher::advance(std::string_view bytes) {
  State state = state_;
  if (!feed(state, bytes) || !could_complete(state)) return false;
  state_ = std::move(state);
  return true;
}

bool GrammarMatcher::complete() const {
  const std::vector<int32_t>& stacks = stacks_of(state_.stacks);
  return state_.pending.empty() &&
         std::ranges::any_of(stacks, [](int32_t stack) { return stack == kEmpty; });
}

bool GrammarMatcher::finished() const {
  const std::vector<int32_t>& stacks = stacks_of(state_.stacks);
  return state_.pending.empty() &&
         std::ranges::all_of(stacks, [](int32_t stack) { return stack == kEmpty; });
}

bool GrammarMatcher::compact() {
  if (table_->size() <= kCompactAfter) return false;
  const std::shared_ptr<StackTable> old = std::exchange(table_, std::make_shared<StackTable>());
  std::vector<int32_t> stacks = old->sets_[state_.stacks];
  for (int32_t& stack : stacks) {
    std::vector<Position> positions;  // top first
    for (int32_t at = stack; at != kEmpty; at = old->nodes_[at].below) {
      positions.push_back(old->nodes_[at].top);
    }
    stack = kEmpty;
    for (auto it = positions.rbegin(); it != positions.rend(); ++it) stack = intern(*it, stack);
  }
  settle(stacks);
  state_.stacks = intern_set(std::move(stacks));
  return true;
}

}  // namespace baton
