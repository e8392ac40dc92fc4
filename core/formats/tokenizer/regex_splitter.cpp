#include "core/formats/tokenizer/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "baton/error.h"
#include "core/formats/tokenizer/utf8.h"

namespace baton {

namespace {

pcre2_code* compiled(const std::shared_ptr<void>& code) {
  return static_cast<pcre2_code*>(code.get());
}

using MatchData = std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)>;

}  // namespace

RegexSplitter::RegexSplitter(std::string pattern) : pattern_(std::move(pattern)) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  // DOLLAR_ENDONLY: "$" means the end of the piece, never "before a final newline".
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_.data()), pattern_.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error_code,
                                   &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    throw Error(ErrorCategory::kInternal,
                "pre-tokenizer regex '" + pattern_ + "' rejected at offset " +
                    std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(message));
  }
  // JIT is only a speed-up; the interpreter gives the same matches when it is unavailable.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  code_ =
      std::shared_ptr<void>(code, [](void* p) { pcre2_code_free(static_cast<pcre2_code*>(p)); });
}

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  MatchData match(pcre2_match_data_create_from_pattern(compiled(code_), nullptr),
                  &pcre2_match_data_free);
  if (!match) throw Error(ErrorCategory::kOutOfMemory, "no memory for a regex match");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t piece_start = 0;
  size_t search_from = 0;
  while (search_from < text.size()) {
    const int rc = pcre2_match(compiled(code_), subject, text.size(), search_from,
                               PCRE2_NO_UTF_CHECK, match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      throw Error(ErrorCategory::kInternal, "pre-tokenizer regex '" + pattern_ + "' failed: " +
                                                reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const size_t begin = ovector[0];
    const size_t end = ovector[1];
    if (end == begin) {
      // An empty match cuts nothing; step over one character and keep looking.
      if (begin >= text.size()) break;
      search_from = begin + utf8::sequence_length(text[begin]);
      continue;
    }
    if (begin > piece_start) pieces.push_back(text.substr(piece_start, begin - piece_start));
    pieces.push_back(text.substr(begin, end - begin));
    piece_start = search_from = end;
  }
  if (piece_start < text.size()) pieces.push_back(text.substr(piece_start));
}

}  // namespace baton
