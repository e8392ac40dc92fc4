// `baton bench grammar`: what a grammar's token mask costs per generated token on a vocabulary,
// walking a text the grammar accepts one token at a time and timing the mask before each. The
// walk takes, at each step, the longest allowed token that spells the text there, as a model
// held to the grammar would (the tokenizer's own split may start with a space the grammar
// refuses, as SentencePiece's does).

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/serving/sampling/grammar_constraint.h"
#include "tools/commands.h"
#include "tools/model_flags.h"

namespace baton::cli {
namespace {

// JSON objects with string, number and literal values (the shape structured outputs ask for).
constexpr const char* kJsonGrammar = R"gbnf(
root   ::= ws object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}" ws
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt] )* "\"" ws
number ::= "-"? [0-9]+ ( "." [0-9]+ )? ws
ws     ::= [ \t\n]*
)gbnf";

constexpr const char* kJsonText =
    R"({"name": "Baton", "version": 1.5, "tags": ["fast", "portable"], "gpu": false, )"
    R"("limits": {"context": 4096, "batch": 32}, "notes": "structured outputs"})";

struct GrammarBenchFlags {
  std::string vocabulary;
  std::string grammar;  // GBNF, compiled from the constraint flags; empty: kJsonGrammar
  std::string text = kJsonText;
  int repetitions = 3;
};

double median(std::vector<double> values) {
  std::ranges::sort(values);
  return values[values.size() / 2];
}

int run(const GrammarBenchFlags& f) {
  const auto tokenizer =
      Tokenizer::create(vocabulary_from_gguf(gguf::GgufFile::open(f.vocabulary)));
  const auto grammar =
      std::make_shared<const Grammar>(parse_gbnf(f.grammar.empty() ? kJsonGrammar : f.grammar));
  const auto pieces = TokenPieces::of(*tokenizer);
  std::vector<double> micros;
  std::vector<char> allowed;
  size_t steps = 0;
  for (int r = 0; r < f.repetitions; ++r) {
    GrammarConstraint constraint(grammar, pieces, true);
    steps = 0;
    for (size_t at = 0; at < f.text.size(); ++steps) {
      const auto start = std::chrono::steady_clock::now();
      constraint.allowed(allowed);
      micros.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
      int32_t longest = -1;
      for (size_t id = 0; id < allowed.size(); ++id) {
        const std::string& piece = pieces->pieces[id];
        if (allowed[id] && !piece.empty() && f.text.compare(at, piece.size(), piece) == 0 &&
            (longest < 0 || piece.size() > pieces->pieces[longest].size())) {
          longest = static_cast<int32_t>(id);
        }
      }
      if (longest < 0) {
        throw Error(ErrorCategory::kInvalidArgument,
                    "the grammar allows no token of the text at byte " + std::to_string(at));
      }
      constraint.accept(longest);
      at += pieces->pieces[longest].size();
    }
  }
  double total = 0;
  for (const double m : micros) total += m;
  std::cout << "vocabulary " << f.vocabulary << ": " << pieces->pieces.size() << " tokens\n"
            << "text: " << steps << " tokens, " << f.repetitions << " walks\n"
            << "mask per token: median " << median(micros) << " us, mean "
            << total / static_cast<double>(micros.size()) << " us, max "
            << *std::ranges::max_element(micros) << " us\n";
  return 0;
}

}  // namespace

Action add_bench_grammar_command(CLI::App& bench) {
  auto f = std::make_shared<GrammarBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "grammar", "time a grammar's token mask per generated token on a vocabulary");
  cmd->add_option("-m,--model", f->vocabulary, "GGUF model or vocabulary file")->required();
  // Default: a JSON grammar.
  add_output_constraint_flags(*cmd, f->grammar);
  cmd->add_option("--text", f->text, "a text the grammar accepts, walked token by token")
      ->capture_default_str();
  cmd->add_option("-r,--repetitions", f->repetitions, "walks of the text")->capture_default_str();
  return [f] { return run(*f); };
}

}  // namespace baton::cli
