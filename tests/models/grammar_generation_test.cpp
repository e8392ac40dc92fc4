// Generation under a GBNF grammar on the demo model, sampled at temperature 1 over many seeds:
// every output that ended by itself is a whole sentence of the grammar, checked by a validator
// of its own (nlohmann's JSON parser, a regex), and one cut by max_tokens is a prefix of one.
#include <gtest/gtest.h>

#include <omp.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "baton/error.h"
#include "baton/llm.h"
#include "baton/structured_output.h"
#include "core/serving/sampling/grammar_matcher.h"
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

TEST_F(GrammarGeneration, MasksBesideTheStepGiveWhatMasksAfterItGive) {
  LLM beside({.model = testing::demo_model().string(), .grammar_masks = GrammarMasks::kBeside});
  LLM after({.model = testing::demo_model().string(), .grammar_masks = GrammarMasks::kAfter});
  std::vector<Request> requests;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Request request{.prompt = "And God said"};
    request.params.grammar = kJsonObject;
    request.params.max_tokens = 48;
    request.params.n = 2;  // forks take the mask prepared for their parent
    request.params.sampling = {
        .temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0, .seed = seed};
    requests.push_back(request);
  }
  Request beams{.prompt = "And he said,"};
  beams.params.grammar = R"(root ::= ("yea" | "nay" | "verily") ", " [a-z]+ "." )";
  beams.params.use_beam_search = true;
  beams.params.beam_width = 3;
  beams.params.n = 3;
  beams.params.max_tokens = 24;
  requests.push_back(beams);
  // One batch: the masks of several requests sharing a grammar are prepared together.
  const std::vector<GenerationOutput> prepared = beside.generate(requests);
  const std::vector<GenerationOutput> expected = after.generate(requests);
  ASSERT_EQ(prepared.size(), expected.size());
  for (size_t r = 0; r < prepared.size(); ++r) {
    ASSERT_EQ(prepared[r].completions.size(), expected[r].completions.size());
    for (size_t c = 0; c < prepared[r].completions.size(); ++c) {
      EXPECT_EQ(prepared[r].completions[c].tokens, expected[r].completions[c].tokens)
          << "request " << r << ", completion " << c;
    }
  }
  EXPECT_GT(beside.stats().grammar_seconds, 0.0);
  // Masks after the step: the engine's thread paid for all of the grammar's work.
  EXPECT_EQ(after.stats().grammar_engine_seconds, after.stats().grammar_seconds);
}

TEST_F(GrammarGeneration, MasksGoBesideTheStepWhereItLeavesAHostCoreFree) {
  GenerationParams params;
  params.grammar = kJsonObject;
  params.max_tokens = 16;
  // With the masks after the step, the engine's thread pays for all of the grammar's work, to
  // the bit; beside it, it pays its waits instead.
  const auto masks_after_step = [&](LLM& llm) {
    llm.generate("And God said", params);
    return llm.stats().grammar_engine_seconds == llm.stats().grammar_seconds;
  };
  // Threads 0 asks for every core; OMP_THREAD_LIMIT below the core count leaves one free.
  LLM every_core({.model = testing::demo_model().string(), .threads = 0});
  const unsigned cores = std::thread::hardware_concurrency();
  EXPECT_EQ(masks_after_step(every_core), static_cast<unsigned>(omp_get_thread_limit()) >= cores);
  if (std::thread::hardware_concurrency() > 1) {
    LLM one_thread({.model = testing::demo_model().string(), .threads = 1});
    EXPECT_FALSE(masks_after_step(one_thread));
  }
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
