#include "core/api/data_parallel_router.h"

#include <gtest/gtest.h>

#include <numeric>

namespace baton {
namespace {

// A replica that records what the router hands it; the test plays its engine by sending
// updates through the sink and by setting the stats it reports.
class RecordingReplica final : public ReplicaEngine {
 public:
  RecordingReplica(UpdateSink sink, std::function<void(const std::string&)> on_failure)
      : sink(std::move(sink)), fail(std::move(on_failure)) {}

  void add(uint64_t id, std::vector<int32_t>, const GenerationParams&, int32_t) override {
    added.push_back(id);
  }
  void abort(uint64_t id) override { aborted.push_back(id); }
  void abort_sample(uint64_t id, int32_t sample) override {
    aborted_samples.emplace_back(id, sample);
  }
  EngineStats stats() const override { return reported; }

  UpdateSink sink;
  std::function<void(const std::string&)> fail;
  std::vector<uint64_t> added, aborted;
  std::vector<std::pair<uint64_t, int32_t>> aborted_samples;
  EngineStats reported;
};

class RouterTest : public ::testing::Test {
 protected:
  static constexpr int32_t kBlockSize = 4;

  void make(int32_t replicas) {
    router = std::make_unique<DataParallelRouter>(
        replicas, kBlockSize,
        [this](int32_t, ReplicaEngine::UpdateSink sink,
               std::function<void(const std::string&)> on_failure) {
          auto replica = std::make_unique<RecordingReplica>(std::move(sink), std::move(on_failure));
          this->replicas.push_back(replica.get());
          return replica;
        },
        [this](std::vector<SequenceUpdate> updates) {
          for (SequenceUpdate& u : updates) delivered.push_back(std::move(u));
        });
  }

  // The replica the request went to.
  int32_t add(uint64_t id, std::vector<int32_t> prompt, GenerationParams params = {}) {
    router->add(id, std::move(prompt), params, 0);
    for (size_t i = 0; i < replicas.size(); ++i) {
      const auto& added = replicas[i]->added;
      if (!added.empty() && added.back() == id) return static_cast<int32_t>(i);
    }
    return -1;
  }

  static std::vector<int32_t> tokens(int32_t first, int32_t count) {
    std::vector<int32_t> t(static_cast<size_t>(count));
    std::iota(t.begin(), t.end(), first);
    return t;
  }

  void finish(int32_t replica, uint64_t id, int32_t sample = 0) {
    replicas[static_cast<size_t>(replica)]->sink(
        {{.id = id, .sample = sample, .new_tokens = {7}, .finished = true}});
  }

  std::vector<RecordingReplica*> replicas;
  std::vector<SequenceUpdate> delivered;
  std::unique_ptr<DataParallelRouter> router;
};

TEST_F(RouterTest, SpreadsRequestsOverTheLeastLoadedReplicas) {
  make(3);
  EXPECT_EQ(add(1, tokens(0, 3)), 0);
  EXPECT_EQ(add(2, tokens(100, 3)), 1);
  EXPECT_EQ(add(3, tokens(200, 3)), 2);
  finish(1, 2);
  EXPECT_EQ(add(4, tokens(300, 3)), 1) << "replica 1's request finished";
  EXPECT_EQ(delivered.size(), 1u) << "updates pass through to the sink";
}

TEST_F(RouterTest, CountsEverySequenceOfARequest) {
  make(2);
  GenerationParams three;
  three.n = 3;
  EXPECT_EQ(add(1, tokens(0, 3), three), 0);
  EXPECT_EQ(add(2, tokens(100, 3)), 1);
  EXPECT_EQ(add(3, tokens(200, 3)), 1);
  EXPECT_EQ(add(4, tokens(300, 3)), 1) << "3 sequences on replica 0, 2 on replica 1";
  EXPECT_EQ(add(5, tokens(400, 3)), 0);
  finish(0, 1, 0);
  finish(0, 1, 2);
  router->abort_sample(1, 1);
  EXPECT_EQ(replicas[0]->aborted_samples, (std::vector<std::pair<uint64_t, int32_t>>{{1, 1}}));
  EXPECT_EQ(add(6, tokens(500, 3)), 0) << "request 1 ended: replica 0 holds one sequence";
}

TEST_F(RouterTest, KvCacheUseBreaksTies) {
  make(2);
  replicas[0]->reported.kv_blocks_total = 100;
  replicas[0]->reported.kv_blocks_used = 60;
  replicas[1]->reported.kv_blocks_total = 100;
  replicas[1]->reported.kv_blocks_used = 10;
  EXPECT_EQ(add(1, tokens(0, 3)), 1);
}

TEST_F(RouterTest, PrefersTheReplicaThatHoldsThePromptPrefixUnlessItIsBusier) {
  make(3);
  const std::vector<int32_t> system = tokens(0, 8);  // two whole blocks
  std::vector<int32_t> with_question = system;
  with_question.push_back(99);
  EXPECT_EQ(add(1, tokens(50, 9)), 0);
  EXPECT_EQ(add(2, system), 1);
  EXPECT_EQ(add(3, tokens(70, 9)), 2);
  // A busier replica uses more of its pool: the slack counts sequences, not KV use.
  replicas[1]->reported = {.kv_blocks_total = 100, .kv_blocks_used = 90};
  EXPECT_EQ(add(4, with_question), 1) << "every replica holds one sequence; 1 has the prefix";
  EXPECT_EQ(add(5, with_question), 1) << "one sequence more than the least loaded is within slack";
  EXPECT_EQ(add(6, with_question), 0) << "two more are not: the least loaded takes it";
  EXPECT_EQ(add(7, with_question), 0) << "replica 0 learnt the prefix, replica 2 has not";
}

TEST_F(RouterTest, AbortsGoToTheReplicaThatHoldsTheRequest) {
  make(2);
  add(1, tokens(0, 3));
  add(2, tokens(10, 3));
  router->abort(2);
  router->abort(2);
  router->abort(42);
  EXPECT_TRUE(replicas[0]->aborted.empty());
  EXPECT_EQ(replicas[1]->aborted, std::vector<uint64_t>{2});
  EXPECT_EQ(add(3, tokens(20, 3)), 1) << "the aborted request no longer counts";
}

TEST_F(RouterTest, ALostReplicaFailsItsRequestsAndGetsNoMore) {
  make(2);
  add(1, tokens(0, 3));
  add(2, tokens(10, 3));
  add(3, tokens(20, 3));
  replicas[1]->fail("rank 2 did not respond");
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].id, 2u);
  EXPECT_TRUE(delivered[0].finished);
  EXPECT_TRUE(delivered[0].engine_failed);
  EXPECT_EQ(delivered[0].error, "data-parallel replica 1 failed: rank 2 did not respond");
  EXPECT_EQ(add(4, tokens(30, 3)), 0);
  EXPECT_EQ(add(5, tokens(40, 3)), 0);

  delivered.clear();
  replicas[0]->fail("gone");
  router->add(6, tokens(50, 3), {}, 0);
  ASSERT_EQ(delivered.size(), 5u) << "requests 1, 3, 4 and 5 failed, and 6 had nowhere to go";
  EXPECT_EQ(delivered.back().id, 6u);
  EXPECT_EQ(delivered.back().error, "every data-parallel replica of this run has failed");
}

TEST_F(RouterTest, StatsSumOverReplicasAndKeepEachOnesShare) {
  make(2);
  replicas[0]->reported = {.steps = 3,
                           .generated_tokens = 10,
                           .prefix_query_tokens = 100,
                           .prefix_hit_tokens = 50,
                           .kv_blocks_total = 8,
                           .running = 2};
  replicas[1]->reported = {.steps = 4,
                           .generated_tokens = 5,
                           .prefix_query_tokens = 100,
                           .prefix_hit_tokens = 0,
                           .kv_blocks_total = 8,
                           .waiting = 1};
  const EngineStats sum = router->stats();
  EXPECT_EQ(sum.steps, 7);
  EXPECT_EQ(sum.generated_tokens, 15);
  EXPECT_EQ(sum.kv_blocks_total, 16);
  EXPECT_EQ(sum.running, 2);
  EXPECT_EQ(sum.waiting, 1);
  EXPECT_DOUBLE_EQ(sum.prefix_cache_hit_rate, 0.25);
  const std::vector<EngineStats> each = router->replica_stats();
  ASSERT_EQ(each.size(), 2u);
  EXPECT_EQ(each[0].generated_tokens, 10);
  EXPECT_EQ(each[1].generated_tokens, 5);
}

TEST(PrefixBlockHashes, ChainOverWholeBlocksOnly) {
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<int32_t> b = {1, 2, 3, 4, 5, 6, 7, 0};
  const std::vector<uint64_t> ha = prefix_block_hashes(a, 4), hb = prefix_block_hashes(b, 4);
  ASSERT_EQ(ha.size(), 2u) << "the ninth token fills no block";
  ASSERT_EQ(hb.size(), 2u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_NE(ha[1], hb[1]);
  EXPECT_NE(prefix_block_hashes({5, 6, 7, 8, 1, 2, 3, 4}, 4)[1], ha[0])
      << "a block's hash depends on the blocks before it";
}

}  // namespace
}  // namespace baton
