// The escapes and character classes of regular expressions (regex_compiler.h), each written as
// GBNF for one character.
#include "core/serving/sampling/regex_compiler.h"

#include <cstdio>
#include <string>

#include "core/formats/tokenizer/utf8.h"
#include "core/serving/sampling/gbnf_text.h"

namespace baton::detail {
namespace {

using gbnf::Ranges;

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

}  // namespace

uint32_t RegexCompiler::next_code_point() {
  if (utf8::valid_length(pattern_, pos_) == 0) fail(pos_, "invalid UTF-8");
  return utf8::decode(pattern_, pos_);
}

std::string RegexCompiler::escape_outside_class() {
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

Ranges RegexCompiler::shorthand(char c) {
  return c == 'd' ? kDigits : c == 'w' ? kWordChars : kSpaces;
}

Ranges RegexCompiler::negated_shorthand(char c) {
  Ranges ranges = shorthand(c);
  ranges.insert(ranges.end(), kPastAscii.begin(), kPastAscii.end());
  return ranges;
}

uint32_t RegexCompiler::escaped_char(size_t start, bool in_class) {
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

uint32_t RegexCompiler::hex(int digits, size_t start) {
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

std::string RegexCompiler::char_class() {
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

std::string RegexCompiler::ranges_expression(const Ranges& ranges, bool negated) const {
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

std::string RegexCompiler::any_char(bool dot) const {
  if (!options_.inside_json_string) {
    return dot ? gbnf::char_class(kLineTerminators, true) : gbnf::char_class({}, true);
  }
  return ranges_expression(dot ? kLineTerminators : Ranges{}, true);
}

std::string RegexCompiler::character(uint32_t cp) const {
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

}  // namespace baton::detail
