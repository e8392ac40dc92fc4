#include "core/serving/sampling/grammar.h"

#include <algorithm>
#include <functional>
#include <map>

#include "baton/error.h"
#include "core/formats/tokenizer/utf8.h"
#include "core/serving/sampling/gbnf_text.h"

namespace baton {
namespace {

// A grammar may come from any client of the server: bounds on what parsing it may build.
constexpr int kMaxRepetitions = 1000;    // {m,n}: each copy is a copy of the elements
constexpr size_t kMaxElements = 100000;  // over all rules
constexpr size_t kMaxRules = 4096;       // written and generated
constexpr int kMaxNesting = 128;         // groups inside groups

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  Grammar parse() {
    skip_space(true);
    while (pos_ < text_.size()) {
      parse_rule();
      skip_space(true);
    }
    for (size_t id = 0; id < grammar_.rules.size(); ++id) {
      if (!defined_[id])
        fail_at(first_use_[id], "rule '" + grammar_.names[id] + "' is not defined");
    }
    const auto root = ids_.find("root");
    if (root == ids_.end()) fail_at(text_.size(), "the grammar has no rule named 'root'");
    grammar_.root = root->second;
    check_no_left_recursion();
    return std::move(grammar_);
  }

 private:
  [[noreturn]] void fail_at(size_t pos, const std::string& what) const {
    const std::string_view before = text_.substr(0, std::min(pos, text_.size()));
    const size_t line = 1 + std::count(before.begin(), before.end(), '\n');
    const size_t line_start = before.rfind('\n');
    const size_t column = pos - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    throw Error(ErrorCategory::kInvalidArgument, "grammar line " + std::to_string(line) +
                                                     ", column " + std::to_string(column) + ": " +
                                                     what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  }

  // Spaces, tabs and comments; newlines too when `newlines` (inside groups, after `::=` or `|`),
  // since a newline elsewhere ends a rule.
  void skip_space(bool newlines) {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    if (pos_ == start) fail("expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  int32_t rule_id(const std::string& name) {
    const auto [it, added] = ids_.emplace(name, static_cast<int32_t>(grammar_.rules.size()));
    if (added) new_rule(name);
    return it->second;
  }
  int32_t new_rule(const std::string& name) {
    if (grammar_.rules.size() >= kMaxRules) {
      fail("more than " + std::to_string(kMaxRules) +
           " rules, with those groups and repetitions make");
    }
    grammar_.rules.emplace_back();
    grammar_.names.push_back(name);
    defined_.push_back(false);
    first_use_.push_back(pos_);
    return static_cast<int32_t>(grammar_.rules.size() - 1);
  }
  // A rule for a group or a repetition inside rule `owner`.
  int32_t define_generated(const std::string& owner, std::vector<GrammarAlternative> alternatives) {
    const int32_t id = new_rule(owner + "_" + std::to_string(grammar_.rules.size()));
    grammar_.rules[id] = std::move(alternatives);
    defined_[id] = true;
    return id;
  }

  void parse_rule() {
    const size_t start = pos_;
    const std::string name = parse_name();
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") fail("expected '::=' after the rule name '" + name + "'");
    pos_ += 3;
    skip_space(true);
    const int32_t id = rule_id(name);
    if (defined_[id]) fail_at(start, "rule '" + name + "' is defined twice");
    defined_[id] = true;
    grammar_.rules[id] = parse_alternatives(name, false);
    if (pos_ < text_.size() && peek() != '\n' && peek() != '\r') {
      fail(std::string("unexpected '") + peek() + "'");
    }
  }

  std::vector<GrammarAlternative> parse_alternatives(const std::string& rule, bool nested) {
    std::vector<GrammarAlternative> alternatives{parse_sequence(rule, nested)};
    while (peek() == '|') {
      ++pos_;
      skip_space(true);
      alternatives.push_back(parse_sequence(rule, nested));
    }
    return alternatives;
  }

  // Counts `count` more elements against kMaxElements.
  void add_elements(size_t count) {
    elements_ += count;
    if (elements_ > kMaxElements) {
      fail("more than " + std::to_string(kMaxElements) + " elements, repetitions written out");
    }
  }

  GrammarAlternative parse_sequence(const std::string& rule, bool nested) {
    GrammarAlternative sequence;
    while (true) {
      const size_t item_start = sequence.size();
      const char c = peek();
      if (c == '"') {
        ++pos_;
        while (peek() != '"') {
          if (pos_ >= text_.size()) fail("a string literal is not closed");
          const uint32_t cp = parse_char();
          sequence.push_back({.ranges = {{cp, cp}}});
        }
        ++pos_;
      } else if (c == '[') {
        sequence.push_back(parse_class());
      } else if (c == '.') {
        ++pos_;
        sequence.push_back({.negated = true});
      } else if (c == '(') {
        if (++nesting_ > kMaxNesting) {
          fail("groups nested deeper than " + std::to_string(kMaxNesting));
        }
        ++pos_;
        skip_space(true);
        std::vector<GrammarAlternative> group = parse_alternatives(rule, true);
        if (peek() != ')') fail("expected ')'");
        ++pos_;
        --nesting_;
        sequence.push_back({.rule = define_generated(rule, std::move(group))});
      } else if (is_name_char(c)) {
        const size_t at = pos_;
        const int32_t id = rule_id(parse_name());
        if (!defined_[id]) first_use_[id] = std::min(first_use_[id], at);
        sequence.push_back({.rule = id});
      } else {
        return sequence;
      }
      add_elements(sequence.size() - item_start);
      skip_space(nested);
      parse_repetition(rule, sequence, item_start);
      skip_space(nested);
    }
  }

  void parse_repetition(const std::string& rule, GrammarAlternative& sequence, size_t item_start) {
    const char c = peek();
    int min = 0, max = -1;  // -1: unbounded
    if (c == '*') {
      ++pos_;
    } else if (c == '+') {
      ++pos_;
      min = 1;
    } else if (c == '?') {
      ++pos_;
      max = 1;
    } else if (c == '{') {
      ++pos_;
      skip_space(false);
      min = parse_count();
      skip_space(false);
      max = min;
      if (peek() == ',') {
        ++pos_;
        skip_space(false);
        max = peek() == '}' ? -1 : parse_count();
        skip_space(false);
      }
      if (peek() != '}') fail("expected '}'");
      ++pos_;
      if (max != -1 && max < min) fail("a repetition's maximum is below its minimum");
    } else {
      return;
    }
    if (item_start == sequence.size()) fail("nothing to repeat");
    const GrammarAlternative item(sequence.begin() + static_cast<ptrdiff_t>(item_start),
                                  sequence.end());
    // Written out below: min copies, and one more for each optional or the unbounded tail.
    add_elements(item.size() * static_cast<size_t>(std::max(min, max) + 1));
    sequence.resize(item_start);
    for (int i = 0; i < min; ++i) sequence.insert(sequence.end(), item.begin(), item.end());
    if (max == -1) {
      // many ::= item many | (empty)
      const int32_t many = define_generated(rule, {});
      GrammarAlternative again = item;
      again.push_back({.rule = many});
      grammar_.rules[many] = {again, {}};
      sequence.push_back({.rule = many});
      return;
    }
    // Up to (max - min) more, each optional after the one before: opt ::= item opt' | (empty).
    int32_t tail = -1;
    for (int i = min; i < max; ++i) {
      GrammarAlternative more = item;
      if (tail >= 0) more.push_back({.rule = tail});
      tail = define_generated(rule, {more, {}});
    }
    if (tail >= 0) sequence.push_back({.rule = tail});
  }

  int parse_count() {
    const size_t start = pos_;
    int value = 0;
    while (peek() >= '0' && peek() <= '9') {
      value = value * 10 + (peek() - '0');
      if (value > kMaxRepetitions) fail("repetitions past " + std::to_string(kMaxRepetitions));
      ++pos_;
    }
    if (pos_ == start) fail("expected a count");
    return value;
  }

  GrammarElement parse_class() {
    ++pos_;  // '['
    GrammarElement element;
    if (peek() == '^') {
      element.negated = true;
      ++pos_;
    }
    if (peek() == ']' && !element.negated) fail("a character class matches nothing");
    while (peek() != ']') {
      if (pos_ >= text_.size()) fail("a character class is not closed");
      const uint32_t low = parse_char();
      uint32_t high = low;
      if (peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        high = parse_char();
        if (high < low) fail("a character range runs backwards");
      }
      element.ranges.emplace_back(low, high);
    }
    ++pos_;
    return element;
  }

  // One character of a literal or class: an escape or a UTF-8 code point.
  uint32_t parse_char() {
    if (peek() != '\\') {
      if (utf8::valid_length(text_, pos_) == 0) fail("invalid UTF-8");
      return utf8::decode(text_, pos_);
    }
    ++pos_;
    const char c = peek();
    ++pos_;
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'x':
        return parse_hex(2);
      case 'u':
        return parse_hex(4);
      case 'U':
        return parse_hex(8);
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
      case '^':
      case '/':
        return static_cast<unsigned char>(c);
      default:
        fail_at(pos_ - 2, std::string("unknown escape '\\") + c + "'");
    }
  }

  uint32_t parse_hex(int digits) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int digit = gbnf::hex_digit(peek());
      if (digit < 0) fail("expected " + std::to_string(digits) + " hexadecimal digits");
      value = value * 16 + static_cast<uint32_t>(digit);
      ++pos_;
    }
    if (value > 0x10FFFF) fail("a code point past U+10FFFF");
    if (value >= 0xD800 && value <= 0xDFFF) fail("a surrogate code point, which no text holds");
    return value;
  }

  // A rule that can reach itself without consuming a character would make the matcher expand
  // it for ever: refuse it here, naming it.
  void check_no_left_recursion() const {
    const size_t n = grammar_.rules.size();
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t id = 0; id < n; ++id) {
        if (nullable[id]) continue;
        for (const GrammarAlternative& alt : grammar_.rules[id]) {
          if (std::all_of(alt.begin(), alt.end(), [&](const GrammarElement& e) {
                return e.is_rule() && nullable[e.rule];
              })) {
            nullable[id] = changed = true;
            break;
          }
        }
      }
    }
    enum class Mark { kNew, kOpen, kDone };
    std::vector<Mark> marks(n, Mark::kNew);
    const std::function<void(size_t)> visit = [&](size_t id) {
      marks[id] = Mark::kOpen;
      for (const GrammarAlternative& alt : grammar_.rules[id]) {
        for (const GrammarElement& e : alt) {
          if (!e.is_rule()) break;
          if (marks[e.rule] == Mark::kOpen) {
            fail_at(text_.size(), "rule '" + grammar_.names[e.rule] +
                                      "' is left-recursive (it can reach itself before matching "
                                      "a character)");
          }
          if (marks[e.rule] == Mark::kNew) visit(static_cast<size_t>(e.rule));
          if (!nullable[e.rule]) break;
        }
      }
      marks[id] = Mark::kDone;
    };
    for (size_t id = 0; id < n; ++id) {
      if (marks[id] == Mark::kNew) visit(id);
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  Grammar grammar_;
  std::map<std::string, int32_t> ids_;
  std::vector<bool> defined_;
  std::vector<size_t> first_use_;
  size_t elements_ = 0;
  int nesting_ = 0;
};

}  // namespace

Grammar parse_gbnf(std::string_view text) {
  return GbnfParser(text).parse();
}

}  // namespace baton
