// `baton bench grammar`: what a grammar's token mask costs per generated token on a vocabulary,
// walking a text the grammar accepts one token at a time and timing the mask before each.

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "baton/error.h"
#include "core/gguf/gguf_file.h"
#include "core/sampling/grammar_constraint.h"
#include "tools/commands.h"

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
  std::string grammar_file;
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
  std::string gbnf = kJsonGrammar;
  if (!f.grammar_file.empty()) {
    std::ifstream file(f.grammar_file);
    gbnf.assign(std::istreambuf_iterator<char>(file), {});
  }
  const auto grammar = std::make_shared<const Grammar>(parse_gbnf(gbnf));
  const auto pieces = TokenPieces::of(*tokenizer);
  const std::vector<int32_t> tokens = tokenizer->encode(f.text, false, false);
  std::vector<double> micros;
  std::vector<char> allowed;
  for (int r = 0; r < f.repetitions; ++r) {
    GrammarConstraint constraint(grammar, pieces, true);
    for (const int32_t token : tokens) {
      const auto start = std::chrono::steady_clock::now();
      constraint.allowed(allowed);
      micros.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
      if (!allowed[token]) {
        throw Error(ErrorCategory::kInvalidArgument, "the grammar does not allow token " +
                                                         std::to_string(token) + " ('" +
                                                         pieces->pieces[token] + "') of the text");
      }
      constraint.accept(token);
    }
  }
  double total = 0;
  for (const double m : micros) total += m;
  std::cout << "vocabulary " << f.vocabulary << ": " << pieces->pieces.size() << " tokens\n"
            << "text: " << tokens.size() << " tokens, " << f.repetitions << " walks\n"
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
  cmd->add_option("--grammar-file", f->grammar_file, "GBNF grammar (default: JSON)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--text", f->text, "a text the grammar accepts, walked token by token")
      ->capture_default_str();
  cmd->add_option("-r,--repetitions", f->repetitions, "walks of the text")->capture_default_str();
  return [f] { return run(*f); };
}

}  // namespace baton::cli
