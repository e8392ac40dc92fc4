#include "core/sampling/grammar_matcher.h"

#include <algorithm>
#include <set>
#include <string>

#include "baton/error.h"
#include "core/tokenizer/utf8.h"

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
constexpr size_t kMaxDepth = 1024;        // rules inside rules
// Until this many references are opened in one step, stacks met twice are just expanded twice
// (cheaper than remembering them); past it, each is expanded once.
constexpr size_t kRememberAfter = 256;

struct GrammarMatcher::Expansion {
  size_t opened = 0;
  std::set<Stack> seen;
};

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)) {
  Expansion expansion;
  const auto& root = grammar_->rules[grammar_->root];
  for (size_t alternative = 0; alternative < root.size(); ++alternative) {
    expand({{grammar_->root, static_cast<int32_t>(alternative), 0}}, state_.stacks, expansion);
  }
  settle(state_.stacks);
}

void GrammarMatcher::settle(std::vector<Stack>& stacks) {
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
void GrammarMatcher::expand(Stack start, std::vector<Stack>& out, Expansion& expansion) const {
  std::vector<Stack> work;
  work.push_back(std::move(start));
  while (!work.empty()) {
    Stack stack = std::move(work.back());
    work.pop_back();
    while (!stack.empty()) {
      const Position top = stack.back();
      const GrammarAlternative& alternative = grammar_->rules[top.rule][top.alternative];
      if (top.index < static_cast<int32_t>(alternative.size())) break;
      stack.pop_back();
    }
    if (stack.empty() ||
        !grammar_->rules[stack.back().rule][stack.back().alternative][stack.back().index]
             .is_rule()) {
      out.push_back(std::move(stack));
      continue;
    }
    if (++expansion.opened > kRememberAfter && !expansion.seen.insert(stack).second) continue;
    if (expansion.opened > kMaxExpansions || stack.size() >= kMaxDepth) {
      throw Error(ErrorCategory::kInvalidArgument,
                  expansion.opened > kMaxExpansions
                      ? "the grammar is too ambiguous: more than " +
                            std::to_string(kMaxExpansions) + " rules to open for one character"
                      : "the grammar nests rules deeper than " + std::to_string(kMaxDepth));
    }
    // What follows the reference, then the referenced rule above it; a reference at the end
    // of its alternative leaves nothing below, which keeps repetitions' stacks short.
    const Position top = stack.back();
    const GrammarAlternative& alternative = grammar_->rules[top.rule][top.alternative];
    const int32_t rule = alternative[top.index].rule;
    stack.back().index++;
    if (stack.back().index == static_cast<int32_t>(alternative.size())) stack.pop_back();
    const size_t count = grammar_->rules[rule].size();
    for (size_t k = 0; k < count; ++k) {
      Stack next = k + 1 < count ? stack : std::move(stack);
      next.push_back({rule, static_cast<int32_t>(k), 0});
      work.push_back(std::move(next));
    }
  }
}

std::vector<GrammarMatcher::Stack> GrammarMatcher::step(const std::vector<Stack>& stacks,
                                                        uint32_t code_point) const {
  std::vector<Stack> next;
  Expansion expansion;
  for (const Stack& stack : stacks) {
    if (stack.empty()) continue;
    const Position& top = stack.back();
    if (!grammar_->rules[top.rule][top.alternative][top.index].matches(code_point)) continue;
    Stack advanced = stack;
    advanced.back().index++;
    expand(std::move(advanced), next, expansion);
  }
  settle(next);
  return next;
}

bool GrammarMatcher::feed(State& state, std::string_view bytes) const {
  for (const char byte : bytes) {
    state.pending.push_back(byte);
    if (utf8::valid_length(state.pending, 0) == state.pending.size()) {
      size_t pos = 0;
      const char32_t code_point = utf8::decode(state.pending, pos);
      state.pending.clear();
      state.stacks = step(state.stacks, code_point);
      if (state.stacks.empty()) return false;
    } else if (!utf8::is_incomplete_prefix(state.pending, 0)) {
      return false;  // not UTF-8, which no grammar over code points matches
    }
  }
  return true;
}

bool GrammarMatcher::could_complete(const State& state) const {
  if (state.pending.empty()) return !state.stacks.empty();
  // A pair, not a structured binding: clang 14 does not let lambdas capture those.
  const std::pair<uint32_t, uint32_t> range = completions_of(state.pending);
  return std::ranges::any_of(state.stacks, [&](const Stack& stack) {
    if (stack.empty()) return false;
    const Position& top = stack.back();
    return grammar_->rules[top.rule][top.alternative][top.index].matches_any(range.first,
                                                                             range.second);
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
  return state_.pending.empty() &&
         std::ranges::any_of(state_.stacks, [](const Stack& stack) { return stack.empty(); });
}

bool GrammarMatcher::finished() const {
  return state_.pending.empty() &&
         std::ranges::all_of(state_.stacks, [](const Stack& stack) { return stack.empty(); });
}

}  // namespace baton
