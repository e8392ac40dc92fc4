#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "baton/llm.h"
#include "tests/models/tiny_model.h"

namespace baton {
namespace {

constexpr int32_t kEos = 2;  // the tiny model's </s>

struct ReferenceBeam {
  std::vector<int32_t> tokens;  // generated
  double cumulative = 0;
  double score = 0;
};

// Beam search written out plainly over the naive double-precision forward pass: every live beam
// offers its 2 * width likeliest next tokens; walking all offers from the best cumulative
// logprob down, an ending token in the first `width` ranks finishes a beam, any other offer
// stays live until `width` are live; the search stops at max_tokens or once `width` beams have
// finished, and the finished beams are ranked by cumulative / length^length_penalty.
std::vector<ReferenceBeam> reference_beam_search(const testing::TinyModel& model,
                                                 const std::vector<int32_t>& prompt,
                                                 const GenerationParams& p) {
  const int32_t width = p.beam_width;
  const auto ends = [&](int32_t t) {
    return (!p.ignore_eos && t == kEos) ||
           std::count(p.stop_token_ids.begin(), p.stop_token_ids.end(), t) > 0;
  };
  const auto score = [&](const ReferenceBeam& b) {
    return b.cumulative / std::pow(double(b.tokens.size()), double(p.length_penalty));
  };
  std::vector<ReferenceBeam> live = {{}}, finished;
  for (int32_t length = 1; length <= p.max_tokens; ++length) {
    struct Offer {
      size_t beam;
      int rank;
      int32_t token;
      double cumulative;
    };
    std::vector<Offer> offers;
    for (size_t b = 0; b < live.size(); ++b) {
      std::vector<int32_t> context = prompt;
      context.insert(context.end(), live[b].tokens.begin(), live[b].tokens.end());
      const std::vector<double> lp = model.log_softmax(context);
      std::vector<int32_t> ids(lp.size());
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
      std::stable_sort(ids.begin(), ids.end(), [&](int32_t x, int32_t y) { return lp[x] > lp[y]; });
      for (int r = 0; r < 2 * width; ++r)
        offers.push_back({b, r, ids[r], live[b].cumulative + lp[ids[r]]});
    }
    std::stable_sort(offers.begin(), offers.end(),
                     [](const Offer& x, const Offer& y) { return x.cumulative > y.cumulative; });
    std::vector<ReferenceBeam> next;
    for (size_t rank = 0; rank < offers.size() && next.size() < size_t(width); ++rank) {
      ReferenceBeam beam = live[offers[rank].beam];
      beam.tokens.push_back(offers[rank].token);
      beam.cumulative = offers[rank].cumulative;
      if (!ends(offers[rank].token)) {
        next.push_back(beam);
      } else if (rank < size_t(width)) {
        finished.push_back(beam);
      }
    }
    live = next;
    if (length == p.max_tokens) finished.insert(finished.end(), live.begin(), live.end());
    if (live.empty() || finished.size() >= size_t(width)) break;
  }
  for (ReferenceBeam& b : finished) b.score = score(b);
  std::stable_sort(
      finished.begin(), finished.end(),
      [](const ReferenceBeam& x, const ReferenceBeam& y) { return x.score > y.score; });
  finished.resize(std::min(finished.size(), size_t(p.n)));
  return finished;
}

class TinyModelBeamSearch : public ::testing::Test {
 protected:
  TinyModelBeamSearch() : model_({.n_vocab = 260 + 26}, 7) {}
  void SetUp() override { model_.write(path_); }
  void TearDown() override { std::filesystem::remove(path_); }

  GenerationParams beams(int32_t width, int32_t n, int32_t max_tokens) const {
    GenerationParams p;
    p.use_beam_search = true;
    p.beam_width = width;
    p.n = n;
    p.max_tokens = max_tokens;
    return p;
  }
  // Compares the engine's beams with the reference's and checks they are sorted by score.
  GenerationOutput expect_reference(LLM& llm, const GenerationParams& p) {
    const GenerationOutput out = llm.generate("a b c", p);
    const std::vector<ReferenceBeam> expected = reference_beam_search(model_, out.prompt_tokens, p);
    EXPECT_EQ(out.completions.size(), expected.size());
    if (out.completions.size() != expected.size()) return out;
    double previous = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      const Completion& c = out.completions[i];
      EXPECT_EQ(c.tokens, expected[i].tokens) << "beam " << i;
      EXPECT_NEAR(c.cumulative_logprob, expected[i].cumulative, 1e-3) << "beam " << i;
      const double score =
          c.cumulative_logprob / std::pow(double(c.tokens.size()), p.length_penalty);
      if (i > 0) {
        EXPECT_LE(score, previous + 1e-9) << "beams must come best first";
      }
      previous = score;
    }
    EXPECT_EQ(out.tokens, out.completions.front().tokens);
    const EngineStats stats = llm.stats();
    EXPECT_EQ(stats.kv_blocks_free, stats.kv_blocks_total) << "beams return every block";
    return out;
  }

  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("baton_tiny_beams_" + std::to_string(::getpid()) + ".gguf");
  testing::TinyModel model_;
};

TEST_F(TinyModelBeamSearch, FullLengthBeamsEqualABruteForceReferenceAndBeatGreedy) {
  LLM llm(LLMOptions{.model = path_.string(), .backend = "cpu", .threads = 2, .kv_block_size = 4});
  GenerationParams p = beams(4, 4, 6);
  p.ignore_eos = true;
  expect_reference(llm, p);

  const GenerationOutput best = llm.generate("a b c", p);
  std::vector<int32_t> context = best.prompt_tokens;
  double greedy = 0;
  for (int32_t token : model_.greedy(best.prompt_tokens, p.max_tokens)) {
    greedy += model_.log_softmax(context)[token];
    context.push_back(token);
  }
  EXPECT_GE(best.completions.front().cumulative_logprob, greedy - 1e-4);
}

TEST_F(TinyModelBeamSearch, BeamsEndingEarlyAreRankedWithTheLengthPenalty) {
  LLM llm(LLMOptions{.model = path_.string(), .backend = "cpu", .threads = 2, .kv_block_size = 4});
  GenerationParams p = beams(3, 3, 5);
  // Make likely tokens end beams so that finished and live beams compete.
  const std::vector<int32_t> prompt = llm.tokenize("a b c", true, false);
  const std::vector<double> first = model_.log_softmax(prompt);
  std::vector<int32_t> ids(first.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t x, int32_t y) { return first[x] > first[y]; });
  p.stop_token_ids = {ids[1], ids[4]};
  size_t ended_early = 0;
  for (float penalty : {0.0f, 1.0f, 2.0f}) {
    p.length_penalty = penalty;
    for (const Completion& c : expect_reference(llm, p).completions) {
      if (c.finish_reason == FinishReason::kStop) ++ended_early;
    }
  }
  EXPECT_GT(ended_early, 0u) << "the stop tokens were meant to end some beams";
}

TEST_F(TinyModelBeamSearch, WidthOneIsGreedy) {
  LLM llm(LLMOptions{.model = path_.string(), .backend = "cpu", .threads = 2, .kv_block_size = 4});
  GenerationParams p = beams(1, 1, 8);
  p.ignore_eos = true;
  const GenerationOutput out = llm.generate("a b c", p);
  EXPECT_EQ(out.tokens, model_.greedy(out.prompt_tokens, 8));
}

}  // namespace
}  // namespace baton
