#include "core/serving/sampling/regex_grammar.h"

#include <algorithm>
#include <string>
#include <utility>

#include "baton/error.h"
#include "core/serving/sampling/regex_compiler.h"

namespace baton {
namespace detail {
namespace {

constexpr int kMaxCount = 1000;  // the grammar's own bound on {m,n}
constexpr int kMaxDepth = 100;   // groups inside groups

}  // namespace

std::string RegexCompiler::compile() {
  bool anchored_start = false, anchored_end = false;
  std::string_view body = pattern_;
  if (!body.empty() && body.front() == '^') {
    anchored_start = true;
    body.remove_prefix(1);
    pos_ = 1;
  }
  if (ends_with_anchor(body)) {
    anchored_end = true;
    body.remove_suffix(1);
  }
  end_ = pos_ + body.size();
  std::string expression = alternation(0);
  if (pos_ != end_) fail(pos_, std::string("unexpected '") + pattern_[pos_] + "'");
  if (!options_.search) return expression;
  if ((anchored_start || anchored_end) && top_level_alternatives_) {
    fail(0,
         "anchors around alternatives at the top level are ambiguous here; group them: "
         "^(a|b)$");
  }
  std::string anything = "(";
  anything += any_char(false);
  anything += ")*";
  std::string searched;
  if (!anchored_start) searched += anything + ' ';
  searched += '(';
  searched += expression;
  searched += ')';
  if (!anchored_end) searched += ' ' + anything;
  return searched;
}

void RegexCompiler::fail(size_t at, const std::string& what) const {
  throw Error(ErrorCategory::kInvalidArgument,
              "regular expression at offset " + std::to_string(at) + ": " + what);
}

bool RegexCompiler::ends_with_anchor(std::string_view body) {
  if (body.empty() || body.back() != '$') return false;
  size_t backslashes = 0;
  for (size_t i = body.size() - 1; i > 0 && body[i - 1] == '\\'; --i) ++backslashes;
  return backslashes % 2 == 0;
}

std::string RegexCompiler::alternation(int depth) {
  if (depth > kMaxDepth) fail(pos_, "groups nested deeper than " + std::to_string(kMaxDepth));
  std::string out = sequence(depth);
  while (peek() == '|') {
    ++pos_;
    if (depth == 0) top_level_alternatives_ = true;
    out += " | " + sequence(depth);
  }
  return out;
}

std::string RegexCompiler::sequence(int depth) {
  std::string out;
  while (!at_end() && peek() != '|' && peek() != ')') {
    std::string item = atom(depth);
    item = quantified(std::move(item));
    if (!out.empty()) out += ' ';
    out += item;
  }
  // An empty alternative matches the empty string.
  return out.empty() ? "\"\"" : out;
}

std::string RegexCompiler::atom(int depth) {
  const size_t start = pos_;
  const char c = pattern_[pos_];
  switch (c) {
    case '(': {
      ++pos_;
      group_prefix(start);
      std::string inner = alternation(depth + 1);
      if (peek() != ')') fail(start, "a group is not closed");
      ++pos_;
      return "(" + inner + ")";
    }
    case '[':
      return char_class();
    case '.':
      ++pos_;
      return any_char(true);
    case '\\':
      return escape_outside_class();
    case '*':
    case '+':
    case '?':
      fail(start, std::string("nothing to repeat before '") + c + "'");
    case '^':
    case '$':
      fail(start, std::string("'") + c +
                      "' is taken only at the very start or end of the pattern "
                      "(anchors elsewhere cannot be followed by a grammar)");
    default: {
      const uint32_t cp = next_code_point();
      return character(cp);
    }
  }
}

void RegexCompiler::group_prefix(size_t start) {
  if (peek() != '?') return;
  const std::string_view rest = pattern_.substr(pos_, end_ - pos_);
  if (rest.starts_with("?:")) {
    pos_ += 2;
    return;
  }
  const bool python_named = rest.starts_with("?P<");
  const bool named = python_named || (rest.starts_with("?<") && rest.size() > 2 && rest[2] != '=' &&
                                      rest[2] != '!');
  if (!named) {
    fail(start,
         "lookaround, flags and other (?...) groups are not supported in a grammar; use "
         "(...) or (?:...)");
  }
  const size_t close = pattern_.find('>', pos_);
  if (close == std::string_view::npos || close >= end_) fail(start, "a group name is not closed");
  pos_ = close + 1;
}

std::string RegexCompiler::quantified(std::string item) {
  int min = 0, max = -1;
  const char c = peek();
  if (c == '*') {
    ++pos_;
  } else if (c == '+') {
    ++pos_;
    min = 1;
  } else if (c == '?') {
    ++pos_;
    max = 1;
  } else if (c != '{' || !counted(min, max)) {
    return item;
  }
  if (peek() == '?') ++pos_;  // lazy: the same language
  if (peek() == '+') fail(pos_, "possessive quantifiers are not supported");
  if (peek() == '*' || peek() == '?' || (peek() == '{' && counted_at(pos_))) {
    fail(pos_, "a quantifier cannot follow another");
  }
  item = "(" + item + ")";
  if (min == 0 && max == -1) return item + "*";
  if (min == 1 && max == -1) return item + "+";
  if (min == 0 && max == 1) return item + "?";
  if (max == -1) return item + "{" + std::to_string(min) + ",}";
  if (min == max) return item + "{" + std::to_string(min) + "}";
  return item + "{" + std::to_string(min) + "," + std::to_string(max) + "}";
}

bool RegexCompiler::counted(int& min, int& max) {
  const size_t after = count_end(pos_, min, max);
  if (pattern_.substr(pos_).starts_with("{,}")) {
    fail(pos_, "'{,}' is x* to Python and text to ECMAScript; write * instead");
  }
  if (after == 0) return false;
  if (min > kMaxCount || max > kMaxCount) {
    fail(pos_, "a repetition count past " + std::to_string(kMaxCount));
  }
  if (max >= 0 && max < min) fail(pos_, "a repetition's maximum is below its minimum");
  pos_ = after;
  return true;
}

bool RegexCompiler::counted_at(size_t at) const {
  int min = 0, max = 0;
  return count_end(at, min, max) != 0;
}

size_t RegexCompiler::count_end(size_t at, int& low, int& high) const {
  ++at;
  auto number = [&](int& value) {
    const size_t digits_start = at;
    value = 0;
    while (at < end_ && pattern_[at] >= '0' && pattern_[at] <= '9') {
      value = std::min(value * 10 + (pattern_[at] - '0'), kMaxCount + 1);
      ++at;
    }
    return at > digits_start;
  };
  low = 0;
  high = -1;
  const bool has_low = number(low);
  if (at < end_ && pattern_[at] == ',') {
    ++at;
    if (!number(high)) high = -1;
    if (!has_low && high < 0) return 0;
  } else {
    if (!has_low) return 0;
    high = low;
  }
  if (at >= end_ || pattern_[at] != '}') return 0;
  return at + 1;
}

}  // namespace detail

std::string regex_to_gbnf(std::string_view pattern, const RegexOptions& options) {
  return detail::RegexCompiler(pattern, options).compile();
}

}  // namespace baton
