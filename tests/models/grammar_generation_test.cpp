// Generation under a GBNF grammar on the demo model, sampled at temperature 1 over many seeds:
// every output that ended by itself is a whole sentence of the grammar, checked by a validator
// of its own (nlohmann's JSON parser, a regex), and one cut by max_tokens is a prefix of one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "baton/error.h"
#include "baton/llm.h"
#include "baton/structured_output.h"
#include "core/sampling/grammar_matcher.h"
#include "tests/test_data.h"

namespace baton {
namespace {

// JSON objects of string, number and boolean values, nested up to twice.
const char* const kJsonObject = R"gbnf(
root   ::= object
object ::= "{" ws ( pair ( "," ws pair )* )? "}"
pair   ::= string ":" ws value ws
value  ::= string | number | "true" | "false" | inner
inner  ::= "{" ws ( string ":" ws ( string | number ) ws )? "}"
string ::= "\"" [a-zA-Z ]{0,12} "\""
number ::= "-"? [0-9]{1,4}
ws     ::= " "?
)gbnf";

const char* const kList = R"gbnf(
root ::= item{1,3}
item ::= "- " [A-Za-z ,]+ "\n"
)gbnf";

class GrammarGeneration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { llm_ = new LLM({.model = testing::demo_model().string()}); }
  static void TearDownTestSuite() { delete llm_; }

  std::vector<Completion> sample(const std::string& grammar, int32_t max_tokens, int32_t n) {
    GenerationParams params;
    params.grammar = grammar;
    params.max_tokens = max_tokens;
    params.n = n;
    params.sampling = {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0};
    std::vector<Completion> all;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      params.sampling.seed = seed;
      const GenerationOutput out = llm_->generate("And God said", params);
      all.insert(all.end(), out.completions.begin(), out.completions.end());
    }
    return all;
  }

  static LLM* llm_;
};

LLM* GrammarGeneration::llm_ = nullptr;

bool prefix_of_sentence(const std::string& grammar, const std::string& text) {
  GrammarMatcher m(std::make_shared<const Grammar>(parse_gbnf(grammar)));
  return m.advance(text);
}

TEST_F(GrammarGeneration, EveryFinishedOutputIsValidJsonAndEveryCutOneAPrefix) {
  int finished = 0;
  for (const Completion& c : sample(kJsonObject, 64, 4)) {
    if (c.finish_reason == FinishReason::kStop) {
      ++finished;
      EXPECT_TRUE(nlohmann::json::accept(c.text)) << c.text;
      EXPECT_TRUE(nlohmann::json::parse(c.text).is_object()) << c.text;
    } else {
      EXPECT_EQ(c.finish_reason, FinishReason::kLength);
      EXPECT_TRUE(prefix_of_sentence(kJsonObject, c.text)) << c.text;
    }
  }
  EXPECT_GT(finished, 0);  // the demo model does close objects
}

TEST_F(GrammarGeneration, ListOutputsMatchTheLanguage) {
  const std::regex list("(- [A-Za-z ,]+\n){1,3}");
  int finished = 0;
  for (const Completion& c : sample(kList, 48, 2)) {
    if (c.finish_reason != FinishReason::kStop) continue;
    ++finished;
    EXPECT_TRUE(std::regex_match(c.text, list)) << c.text;
  }
  EXPECT_GT(finished, 0);
}

TEST_F(GrammarGeneration, AGrammarThatEndsStopsGenerationWithItsLastCharacterKept) {
  GenerationParams params;
  params.grammar = R"(root ::= ("yes" | "no") ".")";
  params.ignore_eos = true;  // the grammar, not an end token, ends it
  params.sampling.seed = 3;
  const GenerationOutput out = llm_->generate("Is it so?", params);
  EXPECT_TRUE(out.text == "yes." || out.text == "no.") << out.text;
  EXPECT_EQ(out.finish_reason, FinishReason::kStop);
}

TEST_F(GrammarGeneration, BeamSearchKeepsEveryBeamInTheGrammar) {
  GenerationParams params;
  params.grammar = R"(root ::= ("yea" | "nay" | "verily") ", " [a-z]+ "." )";
  params.use_beam_search = true;
  params.beam_width = 4;
  params.n = 4;
  params.max_tokens = 40;
  const GenerationOutput out = llm_->generate("And he said,", params);
  ASSERT_EQ(out.completions.size(), 4u);
  const std::regex language("(yea|nay|verily), [a-z]+\\.");
  for (const Completion& c : out.completions) {
    if (c.finish_reason == FinishReason::kStop) {
      EXPECT_TRUE(std::regex_match(c.text, language)) << c.text;
    } else {
      EXPECT_EQ(c.finish_reason, FinishReason::kLength) << c.text;
    }
  }
  // Ranked best first; the first finished, as the grammar lets a beam end with its period.
  EXPECT_EQ(out.completions.front().finish_reason, FinishReason::kStop);
  // The same JSON schema grammar as sampling, with beams: each output parses.
  params.grammar = json_schema_grammar(
      R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1,
          "maximum": 99}}, "required": ["n"]})");
  for (const Completion& c : llm_->generate("The count:", params).completions) {
    if (c.finish_reason == FinishReason::kStop) {
      EXPECT_TRUE(nlohmann::json::parse(c.text).contains("n")) << c.text;
    }
  }
}

TEST_F(GrammarGeneration, ABeamSearchTheGrammarCannotFillFailsItsRequestAlone) {
  // One text, spelled by a token or two (the letter, its byte-fallback token); eight are asked
  // for. The request fails naming the count, and the engine goes on: the next one is answered.
  GenerationParams params;
  params.grammar = R"(root ::= "A")";
  params.use_beam_search = true;
  params.beam_width = 8;
  params.n = 8;
  try {
    llm_->generate("And all the people said,", params);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("of the n = 8 completions"), std::string::npos)
        << e.what();
  }
  params.n = 1;
  EXPECT_EQ(llm_->generate("And all the people said,", params).text, "A");
}

TEST_F(GrammarGeneration, BadGrammarsAreRefusedNamingTheProblem) {
  GenerationParams params;
  params.grammar = "root ::= missing";
  try {
    llm_->generate("x", params);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("rule 'missing' is not defined"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace baton
