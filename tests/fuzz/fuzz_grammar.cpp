// Any bytes as a GBNF grammar and a text, split at the first NUL byte: the grammar is parsed,
// then the text fed to it a byte at a time. At every step the token mask over a small vocabulary
// must agree with asking the matcher about each token directly (the mask walks tokens in shared
// prefixes), and a byte the matcher refuses must leave its state as it was. Every failure must
// be a baton::Error (a syntax error or a bound passed); anything else is a finding.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/serving/sampling/grammar_constraint.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"

namespace {

// ASCII letters and punctuation, and pieces that split or join multi-byte characters.
std::shared_ptr<const baton::TokenPieces> vocabulary() {
  std::vector<std::string> pieces = {"",   "\xC3", "\xA9", "\xC3\xA9", "\xE2\x82", "\xAC",
                                     "ab", "abc",  "{\"",  "\":",      " ",        "  ",
                                     "\n", "12",   "-",    "\xF0\x9F"};
  for (char c = 0x20; c < 0x7F; ++c) pieces.push_back(std::string(1, c));
  return baton::TokenPieces::from(std::move(pieces), {0});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const baton::TokenPieces> pieces = vocabulary();
  const auto documents = baton::fuzz::split_documents(baton::fuzz::as_text(data, size), 2);
  try {
    const auto grammar =
        std::make_shared<const baton::Grammar>(baton::parse_gbnf(documents[0].value_or("")));
    baton::GrammarConstraint constraint(grammar, pieces, true);
    baton::GrammarMatcher matcher(grammar);
    std::vector<char> allowed;
    for (const char byte : documents[1].value_or("")) {
      constraint.allowed(allowed);
      for (size_t id = 1; id < pieces->pieces.size(); ++id) {
        const bool direct = !matcher.finished() && matcher.accepts(pieces->pieces[id]);
        if ((allowed[id] != 0) != direct) __builtin_trap();
      }
      const bool complete = matcher.complete();
      if ((allowed[0] != 0) != complete) __builtin_trap();  // the end token
      const std::string_view piece(&byte, 1);
      if (!matcher.advance(piece)) {
        if (matcher.complete() != complete) __builtin_trap();
        break;
      }
      // The constraint follows only tokens it allowed.
      const auto token = std::find(pieces->pieces.begin(), pieces->pieces.end(), piece);
      if (token != pieces->pieces.end() && allowed[token - pieces->pieces.begin()]) {
        constraint.accept(static_cast<int32_t>(token - pieces->pieces.begin()));
      } else {
        constraint = baton::GrammarConstraint(grammar, pieces, true);
        matcher = baton::GrammarMatcher(grammar);
      }
    }
  } catch (const baton::Error&) {
  }
  return 0;
}
