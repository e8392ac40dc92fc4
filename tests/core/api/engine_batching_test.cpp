#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "baton/error.h"
#include "baton/llm.h"
#include "core/api/handshake.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/serving/engine/length_head.h"
#include "tests/models/demo_f32.h"
#include "tests/models/greedy_params.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"

namespace baton {
namespace {

// 16 prompts of different lengths (2 to 29 tokens) in the style the demo model was trained on.
const std::vector<std::string> kPrompts = {
    "In the beginning",
    "And God said",
    "And the LORD spake unto Moses, saying, Speak unto the children of Israel",
    "Jesus wept",
    "Blessed are the poor in spirit: for theirs is the kingdom of heaven. Blessed are they that "
    "mourn",
    "The LORD is my shepherd",
    "And Abraham said",
    "For God so loved the world, that he gave his only begotten Son, that whosoever believeth in "
    "him",
    "Amen",
    "Behold",
    "And the king answered",
    "Thus saith the LORD of hosts, Consider your ways",
    "Let there be light",
    "And it came to pass in those days, that there went out a decree from Caesar Augustus",
    "Praise ye the LORD",
    "Now the serpent was more subtil than any beast of the field which the LORD God had made. And "
    "he said unto the woman",
};

using testing::greedy;

class EngineBatching : public ::testing::Test {
 protected:
  static LLMOptions options() {
    // f32: a request's tokens must not depend on what shares its steps (demo_f32.h).
    return LLMOptions{.model = testing::demo_model_f32().string(), .backend = "cpu", .threads = 2};
  }
  static std::vector<std::vector<int32_t>> alone(int32_t max_tokens) {
    LLM llm(options());
    std::vector<std::vector<int32_t>> out;
    for (const std::string& p : kPrompts) out.push_back(llm.generate(p, greedy(max_tokens)).tokens);
    return out;
  }
  static std::vector<std::vector<int32_t>> tokens_of(const std::vector<GenerationOutput>& outs) {
    std::vector<std::vector<int32_t>> tokens;
    for (const GenerationOutput& o : outs) tokens.push_back(o.tokens);
    return tokens;
  }
};

TEST_F(EngineBatching, BatchedOutputsEqualEachPromptAlone) {
  LLM llm(options());
  const auto batched = llm.generate(kPrompts, greedy(32));
  EXPECT_EQ(tokens_of(batched), alone(32));
  const EngineStats stats = llm.stats();
  EXPECT_LT(stats.steps, 16 * 32) << "requests must share steps";
  EXPECT_EQ(stats.kv_blocks_free, stats.kv_blocks_total) << "every block returns to the pool";
}

TEST_F(EngineBatching, PreemptionUnderATinyPoolKeepsOutputsUnchanged) {
  LLMOptions o = options();
  o.kv_block_size = 4;
  // The demo model stores 8 layers x 4 kv heads x 32 dims x K and V in f32: 8 KiB per token, so
  // 0.625 MiB holds 80 tokens (20 blocks), far less than 16 prompts plus 24 tokens each; the
  // longest prompt (29 tokens) plus 24 still fits on its own.
  o.kv_cache_mib = 0.625;
  LLM llm(o);
  const auto batched = llm.generate(kPrompts, greedy(24));
  EXPECT_GT(llm.stats().preemptions, 0) << "the pool was meant to run dry";
  EXPECT_EQ(tokens_of(batched), alone(24));
}

TEST_F(EngineBatching, ChunkedPrefillUnderATinyTokenBudgetKeepsOutputsUnchanged) {
  LLMOptions o = options();
  o.max_batch_tokens = 5;  // long prompts take several steps, riding along with decodes
  LLM llm(o);
  EXPECT_EQ(tokens_of(llm.generate(kPrompts, greedy(16))), alone(16));
}

// A lone prompt split into chunks: no step but the last needs logits, and every one must still
// run, or the next chunk attends to K/V that were never written.
TEST_F(EngineBatching, ChunkedPrefillOfALonePromptKeepsItsOutput) {
  LLMOptions o = options();
  o.max_batch_tokens = 3;
  LLM chunked(o), whole(options());
  const std::string& prompt = kPrompts.back();
  const GenerationOutput a = chunked.generate(prompt, greedy(16));
  ASSERT_GT(a.prompt_tokens.size(), 9u) << "the prompt must take several chunks";
  EXPECT_EQ(a.tokens, whole.generate(prompt, greedy(16)).tokens);
}

// The step callback of a batch runs after every step and hears of each request once, when its
// output is complete: a request asking for one token finishes before those asking for 32.
TEST_F(EngineBatching, TheStepCallbackNamesEachRequestOnceAsItFinishes) {
  LLM llm(options());
  std::vector<Request> requests;
  for (const std::string& p : kPrompts) requests.push_back({p, greedy(32)});
  requests[5].params.max_tokens = 1;
  std::vector<size_t> order;
  int64_t calls = 0;
  const auto outputs = llm.generate(requests, [&](const std::vector<size_t>& finished) {
    ++calls;
    order.insert(order.end(), finished.begin(), finished.end());
  });
  ASSERT_EQ(order.size(), kPrompts.size());
  EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), kPrompts.size());
  EXPECT_EQ(order.front(), 5u);
  EXPECT_EQ(outputs[5].tokens.size(), 1u);
  EXPECT_EQ(calls, llm.stats().steps);
}

// One request at a time (max_seqs 1), four arriving together with their lengths as the client's
// hint: sjf runs them shortest first, and each still says what it says alone.
TEST_F(EngineBatching, SjfRunsTheShortestHintedRequestFirst) {
  LLMOptions o = options();
  o.max_seqs = 1;
  o.scheduling_policy = SchedulingPolicy::kSjf;
  LLM llm(o);
  const std::vector<int32_t> lengths = {32, 4, 16, 8};
  std::vector<Request> requests;
  for (size_t i = 0; i < lengths.size(); ++i) {
    GenerationParams params = greedy(lengths[i]);
    params.expected_tokens = lengths[i];
    requests.push_back({.prompt = kPrompts[i], .params = params});
  }
  const std::vector<GenerationOutput> outputs = llm.generate(requests);
  std::vector<double> finished;
  for (const GenerationOutput& out : outputs) finished.push_back(out.metrics.e2e_seconds);
  EXPECT_LT(finished[1], finished[3]);
  EXPECT_LT(finished[3], finished[2]);
  EXPECT_LT(finished[2], finished[0]);
  LLM plain(options());
  for (size_t i = 0; i < lengths.size(); ++i) {
    EXPECT_EQ(outputs[i].tokens, plain.generate(kPrompts[i], greedy(lengths[i])).tokens);
  }
  EXPECT_EQ(llm.stats().length_predictions, 4);
}

// A length head that says 5 tokens whatever the prompt: the first request's prediction, which
// the online predictor makes max_tokens (nothing learned yet), becomes 5 once its prompt is
// computed. The head's figures are kept apart from the arrival-time ones, which alone decide
// whether sjf trusts predictions; a client's hint still wins; the text does not change; a head
// whose sum says less than one token predicts one, never the 0 that means "no prediction".
TEST_F(EngineBatching, ALengthHeadPredictsAgainOnceThePromptIsComputed) {
  const testing::TempFile file("length_head.json");
  LLMOptions o = options();
  const auto n_vocab = static_cast<size_t>(LLM(o).summary().n_vocab);
  const auto hash_of = [](const std::filesystem::path& model) {
    return model_hash(gguf::GgufFile::open(model));
  };
  const uint64_t model = hash_of(o.model);
  o.length_head = file.str();
  GenerationParams params = greedy(20);
  params.ignore_eos = true;
  const auto served = [&](double bias, int32_t hint) {
    LengthHead{.logit_weights = std::vector<float>(n_vocab), .model = model, .bias = bias}.write(
        file.path());
    LLM llm(o);
    GenerationParams p = params;
    p.expected_tokens = hint;
    EXPECT_EQ(llm.generate(kPrompts[0], p).tokens, LLM(options()).generate(kPrompts[0], p).tokens);
    return llm.stats();
  };
  const EngineStats five = served(std::log1p(5.0), 0);
  EXPECT_EQ(five.length_head_predictions, 1);
  EXPECT_DOUBLE_EQ(five.length_head_error, 15.0);
  EXPECT_EQ(five.length_predictions, 1);
  EXPECT_DOUBLE_EQ(five.length_prediction_error, 0.0) << "the arrival prediction, max_tokens";
  EXPECT_DOUBLE_EQ(served(-30.0, 0).length_head_error, 19.0) << "at least one token";
  const EngineStats hinted = served(std::log1p(5.0), 20);
  EXPECT_EQ(hinted.length_head_predictions, 0);
  EXPECT_DOUBLE_EQ(hinted.length_prediction_error, 0.0);

  LengthHead{.logit_weights = std::vector<float>(7), .model = model}.write(file.path());
  try {
    LLM wrong_vocabulary(o);
    FAIL() << "a head for another vocabulary was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary of 7 tokens"), std::string::npos) << e.what();
  }
  // The same vocabulary, another model: the f16 demo model's head on its f32 copy.
  LengthHead{.logit_weights = std::vector<float>(n_vocab), .model = hash_of(testing::demo_model())}
      .write(file.path());
  try {
    LLM another_model(o);
    FAIL() << "a head for another model was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a length head for another model file"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(EngineBatching, ReservingPredictedKvKeepsOutputsUnderATinyPool) {
  LLMOptions o = options();
  o.kv_block_size = 4;
  o.kv_cache_mib = 0.625;  // 80 tokens, as in PreemptionUnderATinyPoolKeepsOutputsUnchanged
  o.kv_reservation = KvReservation::kPredicted;
  LLM llm(o);
  EXPECT_EQ(tokens_of(llm.generate(kPrompts, greedy(24))), alone(24));
  const EngineStats stats = llm.stats();
  EXPECT_EQ(stats.kv_blocks_free, stats.kv_blocks_total);
  EXPECT_EQ(stats.length_predictions, static_cast<int64_t>(kPrompts.size()));
  // Each admitted request had room set aside for its whole output (its max_tokens while
  // nothing is learned, then what was learned, times 1.25): the pool never ran dry, where it
  // did 10 times and more without reservation.
  EXPECT_EQ(stats.preemptions, 0);
}

TEST_F(EngineBatching, APriorityNeedsThePriorityPolicy) {
  LLM llm(options());
  try {
    llm.generate(std::vector<Request>{{.prompt = "Amen", .params = greedy(2), .priority = 1}});
    FAIL() << "a priority under fcfs was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(scheduling_policy priority)"), std::string::npos)
        << e.what();
  }
  LLMOptions o = options();
  o.scheduling_policy = SchedulingPolicy::kPriority;
  LLM by_priority(o);
  EXPECT_EQ(
      by_priority
          .generate(std::vector<Request>{{.prompt = "Amen", .params = greedy(2), .priority = 1}})
          .size(),
      1u);
}

TEST_F(EngineBatching, SharedSystemPromptIsComputedOnce) {
  std::string system = "Hear, O Israel: The LORD our God is one LORD.";
  while (system.size() < 800)
    system += " And thou shalt love the LORD thy God with all thine heart, and with all thy soul.";
  std::vector<std::string> prompts;
  for (const char* name :
       {"Moses", "Aaron", "Abraham", "Isaac", "Jacob", "Joseph", "David", "Samuel"}) {
    prompts.push_back(system + " And the LORD said unto " + name);
  }
  LLMOptions cached = options();
  cached.max_seqs = 1;  // one at a time, so each request can reuse the blocks of the last
  LLMOptions uncached = cached;
  uncached.prefix_caching = false;
  LLM with_cache(cached), without_cache(uncached);
  const auto a = with_cache.generate(prompts, greedy(16));
  const auto b = without_cache.generate(prompts, greedy(16));
  EXPECT_EQ(tokens_of(a), tokens_of(b));
  const int64_t system_tokens = static_cast<int64_t>(a[0].prompt_tokens.size()) - 4;
  ASSERT_GT(system_tokens, 150);
  const EngineStats s = with_cache.stats();
  const EngineStats u = without_cache.stats();
  // Without the cache every request computes its whole prompt; with it, the shared full blocks
  // are computed by the first request only.
  EXPECT_GE(u.computed_tokens - s.computed_tokens, 7 * (system_tokens - 16));
  EXPECT_GE(s.prefix_hit_tokens, 7 * (system_tokens - 16));
  EXPECT_EQ(u.prefix_hit_tokens, 0);
}

TEST_F(EngineBatching, OversizedPromptInABatchIsAnErrorNotACrash) {
  LLMOptions o = options();
  o.context_size = 16;
  LLM llm(o);
  EXPECT_THROW(llm.generate({"Amen", kPrompts.back()}, greedy(4)), Error);
  EXPECT_EQ(llm.generate("Amen", greedy(4)).tokens.size(), 4u) << "the engine still serves";
}

}  // namespace
}  // namespace baton
