// Any bytes as a JSON Schema and a regular expression, split at the first NUL byte, as a client
// of the server sends them: each is compiled to GBNF, which must then parse (a compiled grammar
// with a syntax error is a finding; a bound passed is not), and a few steps of its token mask
// are walked. Every failure must be a baton::Error; anything else is a finding.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/structured_output.h"
#include "core/serving/sampling/grammar_constraint.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"

namespace {

std::shared_ptr<const baton::TokenPieces> vocabulary() {
  std::vector<std::string> pieces = {"", "{\"", "\":", "\"", ",", "}", "[", "]", " ", "\xC3\xA9"};
  for (char c = 0x20; c < 0x7F; ++c) pieces.push_back(std::string(1, c));
  return baton::TokenPieces::from(std::move(pieces), {0});
}

// The errors parsing may give a grammar that was compiled correctly: its bounds.
bool is_bound(const std::string& message) {
  for (const char* bound : {"more than", "nested deeper", "repetitions past", "left-recursive"}) {
    if (message.find(bound) != std::string::npos) return true;
  }
  return false;
}

void walk(const std::string& gbnf) {
  static const std::shared_ptr<const baton::TokenPieces> pieces = vocabulary();
  std::shared_ptr<const baton::Grammar> grammar;
  try {
    grammar = std::make_shared<const baton::Grammar>(baton::parse_gbnf(gbnf));
  } catch (const baton::Error& e) {
    if (!is_bound(e.what())) __builtin_trap();  // the compiler wrote invalid GBNF
    return;
  }
  try {
    baton::GrammarConstraint constraint(grammar, pieces, true);
    std::vector<char> allowed;
    for (int step = 0; step < 16 && !constraint.finished(); ++step) {
      constraint.allowed(allowed);
      size_t next = 1;  // the first allowed text token, else stop
      while (next < allowed.size() && !allowed[next]) ++next;
      if (next == allowed.size()) break;
      constraint.accept(static_cast<int32_t>(next));
    }
  } catch (const baton::Error&) {
    // A bound on matching passed.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto documents = baton::fuzz::split_documents(baton::fuzz::as_text(data, size), 2);
  std::string schema_grammar, regex_grammar;
  try {
    schema_grammar = baton::json_schema_grammar(documents[0].value_or(""));
  } catch (const baton::Error&) {
  }
  try {
    regex_grammar = baton::regex_grammar(documents[1].value_or(""));
  } catch (const baton::Error&) {
  }
  if (!schema_grammar.empty()) walk(schema_grammar);
  if (!regex_grammar.empty()) walk(regex_grammar);
  return 0;
}
