#include "core/formats/tokenizer/tokenizer.h"
#include "core/formats/tokenizer/utf8.h"

namespace baton {

namespace {

constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

// Moves the complete characters at the front of `pending` to the result; malformed bytes become
// U+FFFD. With `final`, an incomplete character at the end becomes one U+FFFD too; otherwise
// it stays pending until more bytes arrive.
std::string take_complete(std::string& pending, bool final) {
  std::string out;
  size_t pos = 0;
  while (pos < pending.size()) {
    if (const size_t length = utf8::valid_length(pending, pos); length > 0) {
      out.append(pending, pos, length);
      pos += length;
    } else if (utf8::is_incomplete_prefix(pending, pos)) {
      if (final) {
        out += kReplacementUtf8;
        pos = pending.size();
      }
      break;
    } else {
      out += kReplacementUtf8;
      ++pos;
    }
  }
  pending.erase(0, pos);
  return out;
}

}  // namespace

std::string IncrementalDetokenizer::push(int32_t id) {
  std::string piece = tokenizer_.token_to_piece(id);
  // llama2.c's rule: the piece right after BOS loses SentencePiece's leading space.
  if (id == tokenizer_.bos()) at_start_ = true;
  if (!piece.empty()) {
    if (at_start_ && tokenizer_.strips_leading_space() && piece.front() == ' ') piece.erase(0, 1);
    at_start_ = false;
  }
  pending_ += piece;
  return take_complete(pending_, false);
}

std::string IncrementalDetokenizer::flush() {
  return take_complete(pending_, true);
}

}  // namespace baton
