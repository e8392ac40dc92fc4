#include "core/formats/chat/jinja_lexer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "baton/error.h"
#include "core/formats/chat/jinja_value.h"

namespace baton::jinja {

void syntax_error(int line, int column, const std::string& what) {
  throw Error(ErrorCategory::kInvalidArgument, "chat template: syntax error at " +
                                                   std::to_string(line) + ":" +
                                                   std::to_string(column) + ": " + what);
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kText:
      return "template text";
    case TokenKind::kOutputBegin:
      return "'{{'";
    case TokenKind::kOutputEnd:
      return "'}}'";
    case TokenKind::kStatementBegin:
      return "'{%'";
    case TokenKind::kStatementEnd:
      return "'%}'";
    case TokenKind::kString:
      return "a string";
    case TokenKind::kInteger:
    case TokenKind::kFloat:
      return "a number";
    case TokenKind::kEnd:
      return "end of template";
    default:
      return "'" + token.text + "'";
  }
}

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c));
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) {
    // Jinja renders every newline sequence as "\n" and drops one trailing newline.
    src_.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        src_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        src_ += source[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> run() {
    size_t pos = 0;
    while (true) {
      const size_t open = find_tag(pos);
      std::string text =
          src_.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
      if (open == std::string::npos) {
        emit_text(std::move(text), pos);
        break;
      }
      const char kind = src_[open + 1];
      size_t p = open + 2;
      char left = 0;
      // `+` after `{{` is accepted as in Jinja, where it has nothing to turn off.
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) left = src_[p++];
      if (left == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (kind != '{' && left != '+') {
        lstrip_block(text, pos);
      }
      emit_text(std::move(text), pos);
      char right = 0;
      if (kind == '#') {
        const size_t close = src_.find("#}", p);
        if (close == std::string::npos) error_at(open, "unclosed comment: expected '#}'");
        if (close > p) right = src_[close - 1];
        pos = close + 2;
      } else if (const size_t raw_end =
                     kind == '%' ? match_tag(p, "raw", right) : std::string::npos;
                 raw_end != std::string::npos) {
        pos = lex_raw(open, raw_end, right);
      } else {
        push(kind == '{' ? TokenKind::kOutputBegin : TokenKind::kStatementBegin, open,
             kind == '{' ? "{{" : "{%");
        pos = lex_tag(p, kind, open, right);
      }
      pos = skip_after_tag(pos, right, kind != '{');
    }
    Token end;
    end.kind = TokenKind::kEnd;
    locate(end, src_.size());
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  // When a block tag's body from p is just `word` (then an optional `-` or `+`), returns the
  // offset after its `%}` and sets right to the modifier; npos otherwise.
  size_t match_tag(size_t p, std::string_view word, char& right) const {
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (src_.compare(p, word.size(), word) != 0) return std::string::npos;
    p += word.size();
    if (p < src_.size() && is_name_char(src_[p])) return std::string::npos;
    while (p < src_.size() && is_space(src_[p])) ++p;
    char modifier = 0;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) modifier = src_[p++];
    if (src_.compare(p, 2, "%}") != 0) return std::string::npos;
    right = modifier;
    return p + 2;
  }

  // `{% raw %}...{% endraw %}`: the text between is output as written. As in Jinja, trim_blocks
  // does not apply after the opening tag, lstrip_blocks does before the closing one. Returns the
  // offset after `{% endraw %}`, with right set to its modifier.
  size_t lex_raw(size_t open, size_t body_start, char& right) {
    if (right == '-') {
      while (body_start < src_.size() && is_space(src_[body_start])) ++body_start;
    }
    for (size_t i = src_.find("{%", body_start); i != std::string::npos;
         i = src_.find("{%", i + 1)) {
      size_t q = i + 2;
      char left = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) left = src_[q++];
      const size_t end = match_tag(q, "endraw", right);
      if (end == std::string::npos) continue;
      std::string text = src_.substr(body_start, i - body_start);
      if (left == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (left != '+') {
        lstrip_block(text, body_start);
      }
      emit_text(std::move(text), body_start);
      return end;
    }
    error_at(open, "unclosed raw block: expected '{% endraw %}'");
  }

  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return std::string::npos;
  }

  // lstrip_blocks: spaces and tabs between the start of a line and a block tag are dropped.
  void lstrip_block(std::string& text, size_t text_start) const {
    const size_t newline = text.rfind('\n');
    const size_t tail = newline == std::string::npos ? 0 : newline + 1;
    const bool line_start =
        newline != std::string::npos || text_start == 0 || src_[text_start - 1] == '\n';
    if (!line_start) return;
    if (std::all_of(text.begin() + tail, text.end(), [](char c) { return is_space(c); })) {
      text.resize(tail);
    }
  }

  // After a tag: `-` strips all following whitespace; trim_blocks drops the newline after a
  // block or comment unless the tag ends with `+`.
  size_t skip_after_tag(size_t pos, char right, bool block) const {
    if (right == '-') {
      while (pos < src_.size() && is_space(src_[pos])) ++pos;
    } else if (block && right != '+' && pos < src_.size() && src_[pos] == '\n') {
      ++pos;
    }
    return pos;
  }

  void emit_text(std::string text, size_t offset) {
    if (text.empty()) return;
    push(TokenKind::kText, offset, std::move(text));
  }

  Token& push(TokenKind kind, size_t offset, std::string text) {
    Token token;
    token.kind = kind;
    token.text = std::move(text);
    locate(token, offset);
    tokens_.push_back(std::move(token));
    return tokens_.back();
  }

  void locate(Token& token, size_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - 1;
    token.line = static_cast<int>(it - line_starts_.begin()) + 1;
    token.column = static_cast<int>(offset - *it) + 1;
  }

  [[noreturn]] void error_at(size_t offset, const std::string& what) const {
    Token where;
    locate(where, offset);
    syntax_error(where.line, where.column, what);
  }

  // Lexes the expression tokens of one tag up to its closing delimiter, which counts only
  // outside brackets (so `{{ {'a': {}} }}` works); returns the offset after it.
  size_t lex_tag(size_t p, char kind, size_t open, char& right) {
    const std::string close = kind == '{' ? "}}" : "%}";
    int depth = 0;
    while (true) {
      while (p < src_.size() && is_space(src_[p])) ++p;
      if (p >= src_.size()) {
        error_at(open, "unclosed '" + src_.substr(open, 2) + "': expected '" + close + "'");
      }
      if (depth == 0) {
        const bool modifier = src_[p] == '-' || (src_[p] == '+' && kind == '%');
        if (modifier && src_.compare(p + 1, 2, close) == 0) {
          right = src_[p];
          push(kind == '{' ? TokenKind::kOutputEnd : TokenKind::kStatementEnd, p, close);
          return p + 3;
        }
        if (src_.compare(p, 2, close) == 0) {
          push(kind == '{' ? TokenKind::kOutputEnd : TokenKind::kStatementEnd, p, close);
          return p + 2;
        }
      }
      const char c = src_[p];
      if (is_name_start(c)) {
        size_t e = p;
        while (e < src_.size() && is_name_char(src_[e])) ++e;
        push(TokenKind::kName, p, src_.substr(p, e - p));
        p = e;
      } else if (is_digit(c)) {
        p = lex_number(p);
      } else if (c == '\'' || c == '"') {
        p = lex_string(p);
      } else {
        p = lex_operator(p, depth);
      }
    }
  }

  size_t lex_number(size_t p) {
    const size_t start = p;
    std::string digits;
    const auto read_digits = [&] {
      while (p < src_.size() && (is_digit(src_[p]) || (src_[p] == '_' && p + 1 < src_.size() &&
                                                       is_digit(src_[p + 1])))) {
        if (src_[p] != '_') digits += src_[p];
        ++p;
      }
    };
    read_digits();
    bool is_float = false;
    if (p + 1 < src_.size() && src_[p] == '.' && is_digit(src_[p + 1])) {
      is_float = true;
      digits += src_[p++];
      read_digits();
    }
    if (p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
      size_t q = p + 1;
      if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
      if (q < src_.size() && is_digit(src_[q])) {
        is_float = true;
        digits += src_.substr(p, q - p);
        p = q;
        read_digits();
      }
    }
    Token& token = push(is_float ? TokenKind::kFloat : TokenKind::kInteger, start, digits);
    if (is_float) {
      token.float_value = std::strtod(digits.c_str(), nullptr);
    } else {
      errno = 0;
      token.int_value = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == ERANGE) error_at(start, "integer literal " + digits + " is too large");
    }
    return p;
  }

  // Decodes the escapes Python's unicode-escape codec knows; other backslashes stay as written.
  size_t lex_string(size_t p) {
    const size_t start = p;
    const char quote = src_[p++];
    std::string value;
    while (true) {
      if (p >= src_.size()) error_at(start, "unterminated string literal");
      const char c = src_[p++];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (p >= src_.size()) error_at(start, "unterminated string literal");
      const char e = src_[p++];
      const auto hex = [&](size_t n) {
        if (p + n > src_.size() || !std::all_of(src_.begin() + p, src_.begin() + p + n, [](char h) {
              return std::isxdigit(static_cast<unsigned char>(h));
            })) {
          error_at(p - 2, std::string("truncated \\") + e + " escape");
        }
        const auto cp = static_cast<uint32_t>(std::strtoul(src_.substr(p, n).c_str(), nullptr, 16));
        p += n;
        return cp;
      };
      switch (e) {
        case '\n':
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case 'x':
          append_utf8(value, hex(2));
          break;
        case 'u':
          append_utf8(value, hex(4));
          break;
        case 'U':
          append_utf8(value, hex(8));
          break;
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2 && p < src_.size() && src_[p] >= '0' && src_[p] <= '7'; ++i) {
              cp = cp * 8 + static_cast<uint32_t>(src_[p++] - '0');
            }
            append_utf8(value, cp);
          } else {
            value += '\\';
            value += e;
          }
      }
    }
    push(TokenKind::kString, start, std::move(value));
    return p;
  }

  size_t lex_operator(size_t p, int& depth) {
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const std::string_view op : kTwo) {
      if (src_.compare(p, 2, op) == 0) {
        push(TokenKind::kOperator, p, std::string(op));
        return p + 2;
      }
    }
    const char c = src_[p];
    if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) == std::string_view::npos) {
      // The whole UTF-8 character, so that the message stays valid UTF-8.
      const std::string_view character = utf8_chars(std::string_view(src_).substr(p, 4))[0];
      error_at(p, "unexpected character '" + std::string(character) + "'");
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    push(TokenKind::kOperator, p, std::string(1, c));
    return p + 1;
  }

  std::string src_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) {
  return Lexer(source).run();
}

}  // namespace baton::jinja
