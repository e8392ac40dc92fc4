#include "core/api/perplexity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>

#include "baton/error.h"
#include "core/runtime/backend_registry.h"
#include "core/serving/engine/step_runner.h"
#include "tests/models/tiny_model.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"

namespace baton {
namespace {

// Genesis 1:1-12 in a file, for the bundled demo model.
class GenesisFile {
 public:
  GenesisFile() { std::ofstream(file_.path()) << testing::kGenesis; }
  const std::filesystem::path& path() const { return file_.path(); }

 private:
  testing::TempFile file_{"genesis.txt"};
};

LLMOptions cpu_options(const std::filesystem::path& model) {
  return LLMOptions{.model = model.string(), .backend = "cpu", .threads = 2};
}

double log_softmax_at(std::span<const float> logits, int32_t token) {
  double max_logit = -INFINITY, total = 0;
  for (float l : logits) max_logit = std::max(max_logit, double{l});
  for (float l : logits) total += std::exp(l - max_logit);
  return logits[token] - max_logit - std::log(total);
}

// The same definition computed another way: every chunk decoded one token per step into a cache
// whose blocks are handed out in reverse order, with the scoring rule written out directly.
double perplexity_token_by_token(const LoadedModel& loaded, const std::vector<int32_t>& tokens,
                                 int32_t n_ctx) {
  const ModelConfig& c = loaded.model->config();
  const int32_t block = 8, n_blocks = n_ctx / block + 1;
  const PagedKvCache cache({c.n_layer, c.n_head_kv, c.head_dim, block, n_blocks}, *loaded.backend);
  double nll = 0;
  int64_t count = 0;
  for (size_t chunk = 0; chunk + n_ctx <= tokens.size(); chunk += n_ctx) {
    auto layout = std::make_shared<PagedBatch>();
    layout->block_size = block;
    layout->block_tables = {{}};
    for (int32_t b = n_blocks - 1; b >= 0; --b) layout->block_tables[0].push_back(b);
    layout->token_seq = {0};
    for (int32_t pos = 0; pos + 1 < n_ctx; ++pos) {
      layout->token_pos = {pos};
      StepInput input{.tokens = {pos == 0 ? loaded.tokenizer->bos() : tokens[chunk + pos]},
                      .layout = std::make_shared<PagedBatch>(*layout),
                      .logit_rows = {0}};
      const std::vector<float> logits = run_step(*loaded.model, *loaded.backend, cache, input);
      if (pos >= n_ctx / 2) {
        nll -= log_softmax_at(logits, tokens[chunk + pos + 1]);
        ++count;
      }
    }
  }
  return std::exp(nll / count);
}

TEST(Perplexity, DemoModelMatchesTokenByTokenDecoding) {
  const GenesisFile text;
  const LoadedModel loaded(cpu_options(testing::demo_model()));
  std::vector<int32_t> chunks;
  const PerplexityResult r = perplexity_of_file(
      loaded, text.path(), {.n_ctx = 128}, [&](int32_t chunk, double) { chunks.push_back(chunk); });
  ASSERT_GE(r.n_chunks, 2);
  EXPECT_EQ(static_cast<int32_t>(chunks.size()), r.n_chunks);
  EXPECT_EQ(r.n_scored, int64_t{r.n_chunks} * (128 - 1 - 64));
  EXPECT_TRUE(std::isfinite(r.ppl));
  EXPECT_GT(r.ppl, 1.0);
  EXPECT_LT(r.ppl, 100.0);  // far below the 2048 of a uniform guess over the vocabulary
  EXPECT_GT(r.ppl_error, 0.0);
  EXPECT_LT(r.ppl_error, r.ppl);
  EXPECT_DOUBLE_EQ(r.running_ppl.back(), r.ppl);

  const std::vector<int32_t> tokens = loaded.tokenizer->encode(testing::kGenesis, true, false);
  EXPECT_EQ(r.n_tokens, static_cast<int64_t>(tokens.size()));
  const double expected = perplexity_token_by_token(loaded, tokens, 128);
  EXPECT_NEAR(r.ppl, expected, 1e-3 * expected);

  const PerplexityResult again = perplexity_of_file(loaded, text.path(), {.n_ctx = 128});
  EXPECT_EQ(again.ppl, r.ppl);
  EXPECT_EQ(again.ppl_error, r.ppl_error);
}

void expect_invalid_argument(const std::function<void()>& call, const std::string& fragment) {
  try {
    call();
    FAIL() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Perplexity, RejectsShortTextsSmallContextsAndMissingFiles) {
  const GenesisFile text;
  const LoadedModel loaded(cpu_options(testing::demo_model()));
  expect_invalid_argument([&] { perplexity_of_file(loaded, text.path(), {.n_ctx = 8}); },
                          "below the minimum of 16");
  expect_invalid_argument([&] { perplexity_of_file(loaded, text.path(), {.n_ctx = 512}); },
                          "trained context");
  expect_invalid_argument(
      [&] { perplexity_of_file(loaded, "/nonexistent/text.txt", {.n_ctx = 128}); },
      "/nonexistent/text.txt");
  const auto short_text = std::filesystem::temp_directory_path() /
                          ("baton_ppl_short_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(short_text) << "In the beginning.";
  const size_t n = loaded.tokenizer->encode("In the beginning.", true, false).size();
  expect_invalid_argument(
      [&] { perplexity_of_file(loaded, short_text, {.n_ctx = 64}); },
      "has " + std::to_string(n) + " tokens; one chunk of context 64 needs at least 64");
  std::filesystem::remove(short_text);
}

// A random model against the naive double-precision forward pass, without BOS replacement, with
// each chunk run in steps of 5 tokens that split the scored half.
TEST(Perplexity, TinyModelInStepsMatchesANaiveForwardPass) {
  const testing::TinyModel tiny({.architecture = "llama"}, 7);
  const auto path = std::filesystem::temp_directory_path() /
                    ("baton_ppl_tiny_" + std::to_string(::getpid()) + ".gguf");
  tiny.write(path);
  const LoadedModel loaded(cpu_options(path));
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> pick(3, 299);
  std::vector<int32_t> tokens(40);  // two chunks of 16, and 8 tokens left over
  for (int32_t& t : tokens) t = pick(rng);
  const int32_t n_ctx = 16;
  const PerplexityResult r = perplexity(*loaded.model, *loaded.backend, tokens,
                                        {.n_ctx = n_ctx, .step_tokens = 5}, std::nullopt);
  double nll = 0;
  int count = 0;
  for (int chunk = 0; chunk < 2; ++chunk) {
    for (int pos = n_ctx / 2; pos < n_ctx - 1; ++pos) {
      const std::vector<int32_t> prefix(tokens.begin() + chunk * n_ctx,
                                        tokens.begin() + chunk * n_ctx + pos + 1);
      nll -= tiny.log_softmax(prefix)[tokens[chunk * n_ctx + pos + 1]];
      ++count;
    }
  }
  EXPECT_EQ(r.n_chunks, 2);
  EXPECT_EQ(r.n_scored, count);
  EXPECT_NEAR(r.mean_nll, nll / count, 1e-4);
  EXPECT_NEAR(r.ppl, std::exp(nll / count), 1e-4 * r.ppl);
  expect_invalid_argument(
      [&] {
        perplexity(*loaded.model, *loaded.backend, tokens, {.n_ctx = n_ctx, .step_tokens = 0},
                   std::nullopt);
      },
      "at least 1");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace baton
