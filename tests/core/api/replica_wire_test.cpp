#include "core/api/replica_wire.h"

#include <gtest/gtest.h>

#include "baton/error.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

TEST(ReplicaWire, RouterFramesCarryEveryCommandAndParameter) {
  GenerationParams p;
  p.sampling = {.temperature = 0.3f,
                .top_k = 7,
                .top_p = 0.5f,
                .min_p = 0.2f,
                .repetition_penalty = 1.1f,
                .repeat_last_n = 9,
                .presence_penalty = 0.4f,
                .frequency_penalty = 0.6f,
                .seed = 1234};
  p.max_tokens = 77;
  p.add_special = false;
  p.parse_special = true;
  p.ignore_eos = true;
  p.stop = {"\n\n", "", "end"};
  p.stop_token_ids = {3, 9};
  p.n = 2;
  p.best_of = 4;
  p.logprobs = 5;
  p.use_beam_search = true;
  p.beam_width = 6;
  p.length_penalty = 0.7f;
  p.grammar = "root ::= \"a\"+";
  RouterFrame frame;
  frame.shutdown = true;
  frame.commands.push_back({.kind = ReplicaCommand::Kind::kAdd,
                            .id = 11,
                            .prompt = {1, 2, 3},
                            .params = p,
                            .priority = -2});
  frame.commands.push_back({.kind = ReplicaCommand::Kind::kAbort, .id = 12});
  frame.commands.push_back({.kind = ReplicaCommand::Kind::kAbortSample, .id = 13, .sample = 1});

  const RouterFrame back = decode_router_frame(encode(frame));
  EXPECT_TRUE(back.shutdown);
  ASSERT_EQ(back.commands.size(), 3u);
  const ReplicaCommand& add = back.commands[0];
  EXPECT_EQ(add.kind, ReplicaCommand::Kind::kAdd);
  EXPECT_EQ(add.id, 11u);
  EXPECT_EQ(add.prompt, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(add.priority, -2);
  const GenerationParams& q = add.params;
  EXPECT_EQ(q.sampling.temperature, 0.3f);
  EXPECT_EQ(q.sampling.top_k, 7);
  EXPECT_EQ(q.sampling.top_p, 0.5f);
  EXPECT_EQ(q.sampling.min_p, 0.2f);
  EXPECT_EQ(q.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(q.sampling.repeat_last_n, 9);
  EXPECT_EQ(q.sampling.presence_penalty, 0.4f);
  EXPECT_EQ(q.sampling.frequency_penalty, 0.6f);
  EXPECT_EQ(q.sampling.seed, 1234u);
  EXPECT_EQ(q.max_tokens, 77);
  EXPECT_FALSE(q.add_special);
  EXPECT_TRUE(q.parse_special);
  EXPECT_TRUE(q.ignore_eos);
  EXPECT_EQ(q.stop, p.stop);
  EXPECT_EQ(q.stop_token_ids, p.stop_token_ids);
  EXPECT_EQ(q.n, 2);
  EXPECT_EQ(q.best_of, 4);
  EXPECT_EQ(q.logprobs, 5);
  EXPECT_TRUE(q.use_beam_search);
  EXPECT_EQ(q.beam_width, 6);
  EXPECT_EQ(q.length_penalty, 0.7f);
  EXPECT_EQ(q.grammar, p.grammar);
  EXPECT_EQ(back.commands[1].kind, ReplicaCommand::Kind::kAbort);
  EXPECT_EQ(back.commands[1].id, 12u);
  EXPECT_EQ(back.commands[2].kind, ReplicaCommand::Kind::kAbortSample);
  EXPECT_EQ(back.commands[2].sample, 1);
}

TEST(ReplicaWire, ReplicaFramesCarryUpdatesWithTheirAgeAndStats) {
  const Clock::time_point sent = Clock::now();
  ReplicaFrame frame;
  frame.closing = true;
  frame.stats.steps = 9;
  frame.stats.kv_blocks_used = 4;
  frame.updates.push_back({.id = 5,
                           .sample = 1,
                           .new_tokens = {8, 9},
                           .logprobs = {{.chosen = {8, -0.5f}, .top = {{8, -0.5f}, {2, -1.5f}}},
                                        {.chosen = {9, -0.25f}}},
                           .cumulative_logprob = -0.75,
                           .finished = true,
                           .finish_reason = FinishReason::kStop,
                           .last_token_is_text = true,
                           .first_scheduled = sent - std::chrono::milliseconds(30),
                           .cached_prompt_tokens = 16});
  frame.updates.push_back(
      {.id = 6, .finished = true, .error = "prompt too long", .engine_failed = true});

  const Clock::time_point received = sent + std::chrono::seconds(100);
  const ReplicaFrame back = decode_replica_frame(encode(frame, sent), received);
  EXPECT_TRUE(back.closing);
  EXPECT_EQ(back.stats.steps, 9);
  EXPECT_EQ(back.stats.kv_blocks_used, 4);
  ASSERT_EQ(back.updates.size(), 2u);
  const SequenceUpdate& u = back.updates[0];
  EXPECT_EQ(u.id, 5u);
  EXPECT_EQ(u.sample, 1);
  EXPECT_EQ(u.new_tokens, (std::vector<int32_t>{8, 9}));
  ASSERT_EQ(u.logprobs.size(), 2u);
  EXPECT_EQ(u.logprobs[0].top.size(), 2u);
  EXPECT_EQ(u.logprobs[0].top[1].token, 2);
  EXPECT_EQ(u.logprobs[0].top[1].logprob, -1.5f);
  EXPECT_EQ(u.logprobs[1].chosen.logprob, -0.25f);
  EXPECT_EQ(u.cumulative_logprob, -0.75);
  EXPECT_TRUE(u.finished);
  EXPECT_EQ(u.finish_reason, FinishReason::kStop);
  EXPECT_TRUE(u.last_token_is_text);
  EXPECT_EQ(u.first_scheduled, received - std::chrono::milliseconds(30))
      << "the same age before the receiver's now";
  EXPECT_EQ(u.cached_prompt_tokens, 16);
  EXPECT_EQ(back.updates[1].error, "prompt too long");
  EXPECT_TRUE(back.updates[1].engine_failed);
  EXPECT_EQ(back.updates[1].first_scheduled, Clock::time_point{}) << "never scheduled";
}

TEST(ReplicaWire, ATruncatedOrPaddedFrameIsRefused) {
  RouterFrame frame;
  frame.commands.push_back({.kind = ReplicaCommand::Kind::kAdd, .id = 1, .prompt = {1, 2}});
  std::vector<std::byte> bytes = encode(frame);
  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    const std::span<const std::byte> part(bytes.data(), cut);
    EXPECT_THROW(decode_router_frame(part), Error) << cut;
  }
  bytes.push_back(std::byte{0});
  EXPECT_THROW(decode_router_frame(bytes), Error);
}

}  // namespace
}  // namespace baton
