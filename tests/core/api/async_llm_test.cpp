#include "baton/async_llm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "baton/llm.h"
#include "tests/models/demo_f32.h"
#include "tests/models/greedy_params.h"
#include "tests/test_data.h"

namespace baton {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kPrompts = {
    "In the beginning",
    "Amen",
    "And the LORD spake unto Moses, saying, Speak unto the children of Israel",
    "Jesus wept",
    "Blessed are the poor in spirit: for theirs is the kingdom of heaven. Blessed are they that "
    "mourn",
    "And Abraham said",
    "Thus saith the LORD of hosts, Consider your ways",
    "Let there be light",
};

using testing::greedy;

// Gathers every request's events, from the text thread, for the test thread to wait on.
class Events {
 public:
  EventCallback callback() {
    return [this](const StreamEvent& event) {
      std::lock_guard lock(mutex_);
      events_[event.request_id].push_back(event);
      changed_.notify_all();
    };
  }
  bool wait_finished(uint64_t id, std::chrono::seconds timeout = 60s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
      const auto it = events_.find(id);
      return it != events_.end() && !it->second.empty() && it->second.back().finished;
    });
  }
  bool wait_started(uint64_t id) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 60s, [&] { return events_.contains(id); });
  }
  std::vector<StreamEvent> of(uint64_t id) {
    std::lock_guard lock(mutex_);
    return events_[id];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<uint64_t, std::vector<StreamEvent>> events_;
};

class AsyncLLMTest : public ::testing::Test {
 protected:
  static LLMOptions options() {
    // f32: a request's tokens must not depend on what shares its steps (demo_f32.h).
    return LLMOptions{.model = testing::demo_model_f32().string(), .backend = "cpu", .threads = 2};
  }
  // Waits for the engine thread to apply queued aborts.
  static bool wait_all_blocks_free(const AsyncLLM& llm) {
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(5ms)) {
      const EngineStats s = llm.stats();
      if (s.kv_blocks_free == s.kv_blocks_total && s.running == 0 && s.waiting == 0) return true;
    }
    return false;
  }
};

TEST_F(AsyncLLMTest, ConcurrentClientsGetGenerateOutputsStreamedBeforeTheEnd) {
  std::vector<GenerationOutput> expected;
  {
    LLM llm(options());
    for (const std::string& p : kPrompts) expected.push_back(llm.generate(p, greedy(24)));
  }
  AsyncLLM llm(options());
  Events events;
  std::vector<uint64_t> ids(kPrompts.size());
  std::vector<std::thread> clients;
  for (size_t c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      for (size_t i = c; i < kPrompts.size(); i += 4) {
        ids[i] = llm.add_request({kPrompts[i], greedy(24)}, events.callback());
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    ASSERT_TRUE(events.wait_finished(ids[i])) << kPrompts[i];
    const std::vector<StreamEvent> stream = events.of(ids[i]);
    ASSERT_TRUE(stream.back().output.has_value()) << stream.back().error;
    const GenerationOutput& out = *stream.back().output;
    EXPECT_EQ(out.tokens, expected[i].tokens) << kPrompts[i];
    EXPECT_EQ(out.text, expected[i].text) << kPrompts[i];
    std::string streamed;
    std::vector<int32_t> streamed_tokens;
    for (const StreamEvent& e : stream) {
      streamed += e.text;
      streamed_tokens.insert(streamed_tokens.end(), e.tokens.begin(), e.tokens.end());
    }
    EXPECT_EQ(streamed, out.text);
    EXPECT_EQ(streamed_tokens, out.tokens);
    EXPECT_GT(stream.size(), 1u) << "tokens stream before the request ends";
    EXPECT_FALSE(stream.front().text.empty() && stream.front().tokens.empty());
  }
  EXPECT_EQ(llm.stats().finished_length + llm.stats().finished_stop, 8);
}

TEST_F(AsyncLLMTest, AbortMidStreamEndsTheRequestAndFreesItsBlocks) {
  AsyncLLM llm(options());
  Events events;
  const uint64_t id = llm.add_request({kPrompts[2], greedy(200)}, events.callback());
  ASSERT_TRUE(events.wait_started(id));
  llm.abort(id);
  ASSERT_TRUE(events.wait_finished(id));
  const StreamEvent last = events.of(id).back();
  EXPECT_EQ(last.finish_reason, FinishReason::kAborted);
  ASSERT_TRUE(last.output.has_value());
  EXPECT_LT(last.output->tokens.size(), 200u);
  EXPECT_TRUE(wait_all_blocks_free(llm));
  EXPECT_EQ(llm.stats().finished_aborted, 1);
}

TEST_F(AsyncLLMTest, OversizedPromptGetsAnErrorWhileOthersComplete) {
  LLMOptions o = options();
  o.context_size = 32;
  AsyncLLM llm(o);
  Events events;
  std::string long_prompt;
  for (int i = 0; i < 20; ++i) long_prompt += "And the LORD spake unto Moses. ";
  const uint64_t a = llm.add_request({kPrompts[0], greedy(8)}, events.callback());
  const uint64_t bad = llm.add_request({long_prompt, greedy(8)}, events.callback());
  const uint64_t b = llm.add_request({kPrompts[1], greedy(8)}, events.callback());
  for (uint64_t id : {a, bad, b}) ASSERT_TRUE(events.wait_finished(id));
  const StreamEvent error = events.of(bad).back();
  EXPECT_NE(error.error.find("tokens; the context holds 32"), std::string::npos) << error.error;
  EXPECT_FALSE(error.output.has_value());
  for (uint64_t id : {a, b}) {
    const StreamEvent last = events.of(id).back();
    ASSERT_TRUE(last.output.has_value()) << last.error;
    EXPECT_EQ(last.output->tokens.size(), 8u);
  }
  EXPECT_EQ(llm.stats().failed, 1);
}

// sjf with overtaking and one slot: short requests that arrive while a long one runs take its
// slot, and it resumes from the KV it kept. Every output is what the request gives alone.
TEST_F(AsyncLLMTest, ShortRequestsOvertakeARunningLongOneAndNoOutputChanges) {
  LLMOptions o = options();
  o.context_size = 512;
  const auto params = [](int32_t tokens) {
    GenerationParams p = greedy(tokens);
    p.ignore_eos = true;
    p.expected_tokens = tokens;
    return p;
  };
  const std::vector<size_t> shorts = {0, 1, 3};
  std::vector<GenerationOutput> expected;
  {
    LLM llm(o);
    expected.push_back(llm.generate(kPrompts[2], params(400)));
    for (size_t i : shorts) expected.push_back(llm.generate(kPrompts[i], params(4)));
  }
  o.max_seqs = 1;
  o.scheduling_policy = SchedulingPolicy::kSjf;
  o.sjf_overtake = 4;
  AsyncLLM llm(o);
  Events events;
  std::vector<uint64_t> ids = {llm.add_request({kPrompts[2], params(400)}, events.callback())};
  ASSERT_TRUE(events.wait_started(ids[0]));
  for (size_t i : shorts)
    ids.push_back(llm.add_request({kPrompts[i], params(4)}, events.callback()));
  for (size_t r = 0; r < ids.size(); ++r) {
    ASSERT_TRUE(events.wait_finished(ids[r]));
    const StreamEvent last = events.of(ids[r]).back();
    ASSERT_TRUE(last.output.has_value()) << last.error;
    EXPECT_EQ(last.output->tokens, expected[r].tokens) << "request " << r;
  }
  const EngineStats stats = llm.stats();
  EXPECT_GE(stats.suspensions, 1) << "the long request's 400 tokens outlast the shorts' arrival";
  EXPECT_EQ(stats.preemptions, 0);
  EXPECT_TRUE(wait_all_blocks_free(llm));
}

TEST_F(AsyncLLMTest, DestructorWithRequestsInFlightReturnsPromptly) {
  Events events;
  std::vector<uint64_t> ids;
  std::chrono::steady_clock::time_point destroying;
  {
    AsyncLLM llm(options());
    for (const std::string& p : kPrompts)
      ids.push_back(llm.add_request({p, greedy(200)}, events.callback()));
    ASSERT_TRUE(events.wait_started(ids.front()));
    destroying = std::chrono::steady_clock::now();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - destroying, 2s);
  for (uint64_t id : ids) {
    const std::vector<StreamEvent> stream = events.of(id);
    ASSERT_FALSE(stream.empty());
    EXPECT_TRUE(stream.back().finished);
    EXPECT_EQ(stream.back().finish_reason, FinishReason::kAborted);
  }
}

TEST_F(AsyncLLMTest, MetricsAreConsistentAndCountCachedPrompts) {
  AsyncLLM llm(options());
  Events events;
  std::string prompt;
  for (int i = 0; i < 6; ++i)
    prompt += "And the LORD spake unto Moses, saying, Speak unto the children of Israel. ";
  const uint64_t first = llm.add_request({prompt, greedy(16)}, events.callback());
  ASSERT_TRUE(events.wait_finished(first));
  const uint64_t second = llm.add_request({prompt, greedy(16)}, events.callback());
  ASSERT_TRUE(events.wait_finished(second));
  for (uint64_t id : {first, second}) {
    const StreamEvent last = events.of(id).back();
    ASSERT_TRUE(last.output.has_value()) << last.error;
    const RequestMetrics& m = last.output->metrics;
    EXPECT_GE(m.queue_seconds, 0);
    EXPECT_LE(m.queue_seconds, m.ttft_seconds);
    EXPECT_LE(m.ttft_seconds, m.e2e_seconds);
    EXPECT_GE(m.tpot_seconds, 0);
    EXPECT_EQ(m.prompt_tokens, static_cast<int32_t>(last.output->prompt_tokens.size()));
    EXPECT_EQ(m.output_tokens, 16);
  }
  EXPECT_EQ(events.of(first).back().output->metrics.cached_prompt_tokens, 0);
  EXPECT_GT(events.of(second).back().output->metrics.cached_prompt_tokens, 0);
  const EngineStats stats = llm.stats();
  EXPECT_GT(stats.prefix_cache_hit_rate, 0);
  EXPECT_EQ(stats.generated_tokens, 32);
  EXPECT_EQ(stats.prompt_tokens, 2 * events.of(first).back().output->metrics.prompt_tokens);
}

}  // namespace
}  // namespace baton
