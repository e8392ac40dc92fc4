#include "core/serving/sampling/regex_grammar.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "baton/error.h"
#include "core/formats/tokenizer/utf8.h"
#include "core/serving/sampling/gbnf_text.h"

namespace baton {
namespace {

using gbnf::Ranges;

constexpr int kMaxCount = 1000;  // the grammar's own bound on {m,n}
constexpr int kMaxDepth = 100;   // groups inside groups

const Ranges kDigits = {{'0', '9'}};
const Ranges kWordChars = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpaces = {{'\t', '\r'}, {' ', ' '}};
// Python's and ECMAScript's \d, \w and \s also match some letters, digits and spaces past
// ASCII, and disagree on which: a class negating one of them (\D, [^\s]) generates only ASCII,
// which both exclude from the shorthand's own set, so what is generated matches either way.
const Ranges kPastAscii = {{0x80, 0x10FFFF}};
// What `.` does not match: ECMAScript's line terminators (Python's `.` excludes only \n).
const Ranges kLineTerminators = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};
// What a JSON string cannot hold as itself.
const Ranges kJsonEscaped = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};

class RegexCompiler {
 public:
  RegexCompiler(std::string_view pattern, const RegexOptions& options)
      : pattern_(pattern), options_(options) {}

  std::string compile() {
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

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    throw Error(ErrorCategory::kInvalidArgument,
                "regular expression at offset " + std::to_string(at) + ": " + what);
  }

  // A final '$' that is not escaped.
  static bool ends_with_anchor(std::string_view body) {
    if (body.empty() || body.back() != '$') return false;
    size_t backslashes = 0;
    for (size_t i = body.size() - 1; i > 0 && body[i - 1] == '\\'; --i) ++backslashes;
    return backslashes % 2 == 0;
  }

  bool at_end() const { return pos_ >= end_; }
  char peek() const { return at_end() ? '\0' : pattern_[pos_]; }

  std::string alternation(int depth) {
    if (depth > kMaxDepth) fail(pos_, "groups nested deeper than " + std::to_string(kMaxDepth));
    std::string out = sequence(depth);
    while (peek() == '|') {
      ++pos_;
      if (depth == 0) top_level_alternatives_ = true;
      out += " | " + sequence(depth);
    }
    return out;
  }

  std::string sequence(int depth) {
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

  std::string atom(int depth) {
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

  // After '(': (?:, (?P<name>, (?<name> are plain groups; lookaround and flags are refused.
  void group_prefix(size_t start) {
    if (peek() != '?') return;
    const std::string_view rest = pattern_.substr(pos_, end_ - pos_);
    if (rest.starts_with("?:")) {
      pos_ += 2;
      return;
    }
    const bool python_named = rest.starts_with("?P<");
    const bool named = python_named || (rest.starts_with("?<") && rest.size() > 2 &&
                                        rest[2] != '=' && rest[2] != '!');
    if (!named) {
      fail(start,
           "lookaround, flags and other (?...) groups are not supported in a grammar; use "
           "(...) or (?:...)");
    }
    const size_t close = pattern_.find('>', pos_);
    if (close == std::string_view::npos || close >= end_) fail(start, "a group name is not closed");
    pos_ = close + 1;
  }

  std::string quantified(std::string item) {
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

  // {m}, {m,}, {m,n} or {,n} at pos_, read into min and max; false (pos_ unmoved) when the brace
  // does not open a count, and is then a literal as in Python.
  bool counted(int& min, int& max) {
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
  bool counted_at(size_t at) const {
    int min = 0, max = 0;
    return count_end(at, min, max) != 0;
  }
  // Where the count opened by the brace at `at` ends (past its '}'), or 0 when it is no count.
  size_t count_end(size_t at, int& low, int& high) const {
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

  uint32_t next_code_point() {
    if (utf8::valid_length(pattern_, pos_) == 0) fail(pos_, "invalid UTF-8");
    return utf8::decode(pattern_, pos_);
  }

  std::string escape_outside_class() {
    const size_t start = pos_;
    ++pos_;
    if (at_end()) fail(start, "a pattern cannot end with '\\'");
    const char c = peek();
    switch (c) {
      case 'd':
      case 'w':
      case 's':
        ++pos_;
        return ranges_expression(shorthand(c), false);
      case 'D':
      case 'W':
      case 'S':
        ++pos_;
        return ranges_expression(negated_shorthand(static_cast<char>(c - 'A' + 'a')), true);
      default:
        return character(escaped_char(start, false));
    }
  }

  static Ranges shorthand(char c) { return c == 'd' ? kDigits : c == 'w' ? kWordChars : kSpaces; }
  // The ranges a negated shorthand excludes: the shorthand's and everything past ASCII.
  static Ranges negated_shorthand(char c) {
    Ranges ranges = shorthand(c);
    ranges.insert(ranges.end(), kPastAscii.begin(), kPastAscii.end());
    return ranges;
  }

  // The character an escape other than a shorthand stands for; pos_ is on the character after
  // the backslash.
  uint32_t escaped_char(size_t start, bool in_class) {
    const char c = peek();
    switch (c) {
      case 'n':
        ++pos_;
        return '\n';
      case 't':
        ++pos_;
        return '\t';
      case 'r':
        ++pos_;
        return '\r';
      case 'f':
        ++pos_;
        return '\f';
      case 'v':
        ++pos_;
        return '\v';
      case '0':
        ++pos_;
        if (peek() >= '0' && peek() <= '9') {
          fail(start, "octal escapes are not supported (Python and ECMAScript read them apart)");
        }
        return 0;
      case 'x':
        ++pos_;
        return hex(2, start);
      case 'u':
        ++pos_;
        return hex(4, start);
      case 'b':
        if (in_class) {
          ++pos_;
          return '\b';
        }
        break;
      default:
        break;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '1' && c <= '9')) {
      fail(start, std::string("the escape '\\") + c +
                      "' is not supported in a grammar (word boundaries, backreferences, "
                      "Unicode properties and anchors cannot be followed)");
    }
    return next_code_point();  // an escaped punctuation or other character stands for itself
  }

  uint32_t hex(int digits, size_t start) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int digit = gbnf::hex_digit(peek());
      if (digit < 0) fail(start, "expected " + std::to_string(digits) + " hexadecimal digits");
      value = value * 16 + static_cast<uint32_t>(digit);
      ++pos_;
    }
    if (value >= 0xD800 && value <= 0xDFFF) fail(start, "a surrogate code point");
    return value;
  }

  std::string char_class() {
    const size_t start = pos_;
    ++pos_;
    bool negated = false;
    if (peek() == '^') {
      negated = true;
      ++pos_;
    }
    Ranges ranges;
    bool first = true;
    bool has_shorthand = false;
    while (first || peek() != ']') {
      if (at_end()) fail(start, "a character class is not closed");
      first = false;
      uint32_t low;
      if (peek() == '\\') {
        const size_t escape = pos_++;
        if (at_end()) fail(start, "a character class is not closed");
        const char c = peek();
        if (c == 'd' || c == 'w' || c == 's') {
          ++pos_;
          has_shorthand = true;
          const Ranges more = shorthand(c);
          ranges.insert(ranges.end(), more.begin(), more.end());
          continue;
        }
        if (c == 'D' || c == 'W' || c == 'S') {
          fail(escape, "negated shorthands (\\D, \\W, \\S) inside a class are not supported");
        }
        low = escaped_char(escape, true);
      } else {
        low = next_code_point();
      }
      uint32_t high = low;
      if (peek() == '-' && pos_ + 1 < end_ && pattern_[pos_ + 1] != ']') {
        const size_t dash = pos_++;
        if (peek() == '\\') {
          const size_t escape = pos_++;
          if (at_end()) fail(start, "a character class is not closed");
          high = escaped_char(escape, true);
        } else {
          high = next_code_point();
        }
        if (high < low) fail(dash, "a character range runs backwards");
      }
      ranges.emplace_back(low, high);
    }
    ++pos_;
    if (negated && has_shorthand) ranges.insert(ranges.end(), kPastAscii.begin(), kPastAscii.end());
    return ranges_expression(ranges, negated);
  }

  // One character from `ranges` (or from outside them when `negated`) as an expression.
  std::string ranges_expression(const Ranges& ranges, bool negated) const {
    if (!options_.inside_json_string) {
      if (!negated && gbnf::normalized(ranges).empty()) fail(pos_, "a class matches nothing");
      return gbnf::char_class(ranges, negated);
    }
    // Inside a JSON string: the plain characters as a class, '"' and '\' as their escapes, and
    // no control characters.
    std::string out;
    auto add = [&](const std::string& alternative) {
      out += (out.empty() ? "" : " | ") + alternative;
    };
    auto in = [&](uint32_t cp) {
      bool inside = false;
      for (const auto& [low, high] : ranges) inside = inside || (low <= cp && cp <= high);
      return inside != negated;
    };
    if (negated) {
      Ranges excluded = ranges;
      excluded.insert(excluded.end(), kJsonEscaped.begin(), kJsonEscaped.end());
      add(gbnf::char_class(excluded, true));
    } else if (const Ranges plain = gbnf::subtract(ranges, kJsonEscaped); !plain.empty()) {
      add(gbnf::char_class(plain, false));
    }
    if (in('"')) add(gbnf::literal("\\\""));
    if (in('\\')) add(gbnf::literal("\\\\"));
    if (out.empty()) {
      fail(pos_, "a class that holds only control characters, which are not generated in JSON");
    }
    return "(" + out + ")";
  }

  // `.`: any character but a line terminator. Inside a JSON string only, `dot` false gives any
  // character at all (JSON Schema's unanchored sides), both without control characters.
  std::string any_char(bool dot) const {
    if (!options_.inside_json_string) {
      return dot ? gbnf::char_class(kLineTerminators, true) : gbnf::char_class({}, true);
    }
    return ranges_expression(dot ? kLineTerminators : Ranges{}, true);
  }

  std::string character(uint32_t cp) const {
    if (!options_.inside_json_string) {
      std::string text;
      utf8::append(text, static_cast<char32_t>(cp));
      return gbnf::literal(text);
    }
    switch (cp) {
      case '"':
        return gbnf::literal("\\\"");
      case '\\':
        return gbnf::literal("\\\\");
      case '\n':
        return gbnf::literal("\\n");
      case '\t':
        return gbnf::literal("\\t");
      case '\r':
        return gbnf::literal("\\r");
      case '\b':
        return gbnf::literal("\\b");
      case '\f':
        return gbnf::literal("\\f");
      default:
        break;
    }
    if (cp < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", cp);
      return gbnf::literal(escape);
    }
    std::string text;
    utf8::append(text, static_cast<char32_t>(cp));
    return gbnf::literal(text);
  }

  std::string_view pattern_;
  RegexOptions options_;
  size_t pos_ = 0;
  size_t end_ = 0;
  bool top_level_alternatives_ = false;
};

}  // namespace

std::string regex_to_gbnf(std::string_view pattern, const RegexOptions& options) {
  return RegexCompiler(pattern, options).compile();
}

}  // namespace baton
