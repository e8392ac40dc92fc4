#include "core/serving/sampling/gbnf_text.h"

#include <algorithm>
#include <cstdio>

#include "baton/error.h"
#include "core/formats/tokenizer/utf8.h"

namespace baton::gbnf {
namespace {

// One code point as GBNF writes it inside a literal or a class; `specials` are the ASCII
// characters that need a backslash there.
void append_char(std::string& out, uint32_t cp, std::string_view specials) {
  if (cp < 0x20 || cp == 0x7F) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", cp);
    out += hex;
  } else if (cp < 0x80 && specials.find(static_cast<char>(cp)) != std::string_view::npos) {
    out += '\\';
    out += static_cast<char>(cp);
  } else {
    utf8::append(out, static_cast<char32_t>(cp));
  }
}

}  // namespace

Ranges normalized(Ranges ranges) {
  std::ranges::sort(ranges);
  Ranges merged;
  for (const auto& [low, high] : ranges) {
    if (!merged.empty() && low <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, high);
    } else {
      merged.emplace_back(low, high);
    }
  }
  return merged;
}

Ranges subtract(const Ranges& ranges, const Ranges& removed) {
  const Ranges cut = normalized(removed);
  Ranges kept;
  for (auto [low, high] : normalized(ranges)) {
    for (const auto& [cut_low, cut_high] : cut) {
      if (cut_high < low || cut_low > high) continue;
      if (cut_low > low) kept.emplace_back(low, cut_low - 1);
      if (cut_high >= high) {
        low = 1;
        high = 0;  // nothing left of this range
        break;
      }
      low = cut_high + 1;
    }
    if (low <= high) kept.emplace_back(low, high);
  }
  return kept;
}

std::string literal(std::string_view text) {
  std::string out = "\"";
  for (size_t pos = 0; pos < text.size();) {
    append_char(out, utf8::decode(text, pos), "\"\\");
  }
  return out + "\"";
}

std::string char_class(const Ranges& ranges, bool negated) {
  std::string out = negated ? "[^" : "[";
  for (const auto& [low, high] : normalized(ranges)) {
    append_char(out, low, "\"\\[]-^");
    if (high == low) continue;
    if (high > low + 1) out += '-';
    append_char(out, high, "\"\\[]-^");
  }
  return out + "]";
}

std::string choice_grammar(const std::vector<std::string>& choices) {
  if (choices.empty()) throw Error(ErrorCategory::kInvalidArgument, "there are no choices");
  std::string out = "root ::= ";
  for (size_t i = 0; i < choices.size(); ++i) out += (i ? " | " : "") + literal(choices[i]);
  return out + "\n";
}

}  // namespace baton::gbnf
