// Grammar masks prepared on the preparer's thread while the caller works: sampling afterwards
// draws what it would have drawn without them, and a grammar that fails while its mask is
// prepared fails when its request samples, on the caller's thread.
#include "core/serving/engine/mask_preparer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "baton/error.h"
#include "core/serving/sampling/grammar.h"
#include "core/serving/sampling/sampler.h"

namespace baton {
namespace {

std::unique_ptr<Sampler> sampler_of(const std::string& gbnf,
                                    std::shared_ptr<const TokenPieces> pieces, uint64_t seed) {
  return std::make_unique<Sampler>(
      SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0, .seed = seed},
      std::make_unique<GrammarConstraint>(std::make_shared<const Grammar>(parse_gbnf(gbnf)),
                                          std::move(pieces), true));
}

TEST(MaskPreparer, PreparedSamplersDrawWhatUnpreparedOnesDraw) {
  const auto pieces =
      TokenPieces::from({"{", "}", "\"", "a", "b", "ab", ":", ",", " ", "", "1", "12"}, {9});
  const std::string gbnf = R"gbnf(
root  ::= "{" (pair ("," pair)*)? "}"
pair  ::= "\"" [ab]+ "\":" " "? [0-9]+
)gbnf";
  std::vector<std::unique_ptr<Sampler>> prepared, plain;
  std::vector<std::vector<int32_t>> histories(4);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    prepared.push_back(sampler_of(gbnf, pieces, seed));
    plain.push_back(sampler_of(gbnf, pieces, seed));
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> logit;
  MaskPreparer preparer;
  for (int step = 0; step < 24; ++step) {
    std::vector<Sampler*> live;
    for (size_t i = 0; i < prepared.size(); ++i) {
      if (!prepared[i]->grammar_finished()) live.push_back(prepared[i].get());
    }
    if (live.empty()) break;
    std::vector<float> logits(pieces->pieces.size());
    {
      MaskPreparer::Step masks = preparer.start(live);
      for (float& l : logits) l = logit(rng);  // the caller's own work meanwhile
      // Every other step unwinds without finish(): the Step waits as it goes.
      if (step % 2 == 0) {
        EXPECT_GE(masks.finish().work, 0.0);
      }
    }
    for (size_t i = 0; i < prepared.size(); ++i) {
      if (prepared[i]->grammar_finished()) continue;
      const int32_t token = prepared[i]->sample(logits, histories[i]);
      EXPECT_EQ(token, plain[i]->sample(logits, histories[i])) << "sampler " << i;
      histories[i].push_back(token);
    }
  }
  for (const auto& history : histories) EXPECT_FALSE(history.empty());
}

TEST(MaskPreparer, AGrammarThatFailsWhilePreparedFailsWhenItSamples) {
  // Eleven rules of two ways each after "q": 2^11 ways on, past the matcher's bound of 1,024.
  std::string gbnf = "root ::= \"q\" r1\n";
  for (int i = 1; i <= 11; ++i) {
    gbnf += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " \"b\" | r" +
            std::to_string(i + 1) + " \"c\"\n";
  }
  gbnf += "r12 ::= \"a\"\n";
  const auto sampler = sampler_of(gbnf, TokenPieces::from({"q", "a", ""}, {2}), 1);
  MaskPreparer preparer;
  MaskPreparer::Step masks = preparer.start({sampler.get()});
  masks.finish();
  const std::vector<float> logits = {0.0f, 0.0f, 0.0f};
  try {
    sampler->sample(logits, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too ambiguous"), std::string::npos) << e.what();
  }
}

TEST(MaskPreparer, NothingToPrepareStartsNothing) {
  MaskPreparer preparer;
  const MaskPreparer::Seconds seconds = preparer.start({}).finish();
  EXPECT_EQ(seconds.work, 0.0);
  EXPECT_EQ(seconds.waited, 0.0);
}

}  // namespace
}  // namespace baton
