#include "tools/bench_serve/server_counters.h"

#include <gtest/gtest.h>

namespace baton::bench_serve {
namespace {

TEST(ServerCounters, ReadsBatonsCountersFromAMetricsPage) {
  const std::string page =
      "# HELP baton_preemptions_total Sequences preempted for lack of KV blocks.\n"
      "# TYPE baton_preemptions_total counter\n"
      "baton_preemptions_total 12\n"
      "baton_preemptions_total_other 99\n"
      "baton_recomputed_tokens_total 3456\n"
      "baton_suspensions_total 78\n"
      "baton_request_success_total{finished_reason=\"stop\"} 5\n";
  const std::optional<ServerCounters> counters = parse_server_counters(page);
  ASSERT_TRUE(counters);
  EXPECT_EQ(counters->preemptions, 12);
  EXPECT_EQ(counters->recomputed_tokens, 3456);
  EXPECT_EQ(counters->suspensions, 78);
}

TEST(ServerCounters, AnOlderServerHasNoSuspensions) {
  const std::optional<ServerCounters> counters =
      parse_server_counters("baton_preemptions_total 1\nbaton_recomputed_tokens_total 2\n");
  ASSERT_TRUE(counters);
  EXPECT_FALSE(counters->suspensions);
}

TEST(ServerCounters, AnotherServersPageHasNone) {
  EXPECT_FALSE(parse_server_counters("vllm:num_preemptions_total 3\n"));
  EXPECT_FALSE(
      parse_server_counters("baton_preemptions_total x\nbaton_recomputed_tokens_total 1\n"));
}

}  // namespace
}  // namespace baton::bench_serve
