#include "core/sampling/grammar_matcher.h"

#include <algorithm>

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
  return {std::max(low, kSmallest[length]), std::min<uint32_t>(high, 0x10FFFF)};
}

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)) {
  const auto& root = grammar_->rules[grammar_->root];
  for (size_t alternative = 0; alternative < root.size(); ++alternative) {
    expand({{grammar_->root, static_cast<int32_t>(alternative), 0}}, state_.stacks);
  }
  std::ranges::sort(state_.stacks);
  state_.stacks.erase(std::unique(state_.stacks.begin(), state_.stacks.end()), state_.stacks.end());
}

// Pops finished alternatives and opens rule references until the top is a character class (or
// the stack is empty: the grammar is satisfied); a reference to a rule of k alternatives gives k
// stacks. The grammar has no left recursion (parse_gbnf refuses it), so this ends.
void GrammarMatcher::expand(Stack stack, std::vector<Stack>& out) const {
  while (!stack.empty()) {
    const Position top = stack.back();
    const GrammarAlternative& alternative = grammar_->rules[top.rule][top.alternative];
    if (top.index == static_cast<int32_t>(alternative.size())) {
      stack.pop_back();
      continue;
    }
    const GrammarElement& element = alternative[top.index];
    if (!element.is_rule()) break;
    // What follows the reference, then the referenced rule above it; a reference at the end
    // of its alternative leaves nothing below, which keeps repetitions' stacks short.
    stack.back().index++;
    if (stack.back().index == static_cast<int32_t>(alternative.size())) stack.pop_back();
    const size_t count = grammar_->rules[element.rule].size();
    for (size_t k = 0; k < count; ++k) {
      Stack next = stack;
      next.push_back({element.rule, static_cast<int32_t>(k), 0});
      expand(std::move(next), out);
    }
    return;
  }
  out.push_back(std::move(stack));
}

std::vector<GrammarMatcher::Stack> GrammarMatcher::step(const std::vector<Stack>& stacks,
                                                        uint32_t code_point) const {
  std::vector<Stack> next;
  for (const Stack& stack : stacks) {
    if (stack.empty()) continue;
    const Position& top = stack.back();
    if (!grammar_->rules[top.rule][top.alternative][top.index].matches(code_point)) continue;
    Stack advanced = stack;
    advanced.back().index++;
    expand(std::move(advanced), next);
  }
  std::ranges::sort(next);
  next.erase(std::unique(next.begin(), next.end()), next.end());
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
  const auto [low, high] = completions_of(state.pending);
  return std::ranges::any_of(state.stacks, [&](const Stack& stack) {
    if (stack.empty()) return false;
    const Position& top = stack.back();
    return grammar_->rules[top.rule][top.alternative][top.index].matches_any(low, high);
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
