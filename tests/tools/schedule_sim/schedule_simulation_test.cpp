// The scheduling simulator: a request alone takes its own length in steps, the policies order
// requests as the scheduler's tests say they do, and every policy finishes a mixed workload under
// a pool that runs dry without a step that computes nothing.

#include "tools/schedule_sim/schedule_simulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "baton/error.h"

namespace baton::schedule_sim {
namespace {

SimulatedRequest request(double arrival, int32_t output_tokens, int32_t first_token) {
  SimulatedRequest r{.arrival = arrival, .output_tokens = output_tokens};
  r.prompt.resize(40);
  std::iota(r.prompt.begin(), r.prompt.end(), first_token);
  return r;
}

SimulationConfig config(SchedulingPolicy policy, int32_t slots, double overtake = 0) {
  SimulationConfig c;
  c.options.max_seqs = slots;
  c.options.scheduling_policy = policy;
  c.options.sjf_overtake = overtake;
  return c;
}

// The order requests finished in: by arrival plus latency.
std::vector<size_t> finishing_order(const std::vector<SimulatedRequest>& workload,
                                    const SimulationResult& result) {
  std::vector<size_t> order(workload.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::stable_sort(order, [&](size_t a, size_t b) {
    return workload[a].arrival + result.latencies[a] < workload[b].arrival + result.latencies[b];
  });
  return order;
}

TEST(ScheduleSimulation, ARequestAloneTakesItsOutputLengthInSteps) {
  // The prompt's step gives the first token; far apart, no request waits for another.
  const std::vector<SimulatedRequest> workload = {request(0.5, 20, 0), request(100, 7, 100),
                                                  request(1000.25, 300, 200)};
  SimulationConfig c = config(SchedulingPolicy::kFcfs, 8);
  SimulationResult result = simulate(workload, c);
  EXPECT_EQ(result.latencies, (std::vector<double>{20, 7, 300}));
  EXPECT_EQ(result.time, 1000.25 + 300);
  EXPECT_EQ(result.steps, 20 + 7 + 300);
  EXPECT_EQ(result.empty_steps, 0);
  EXPECT_EQ(result.idle_slot_steps, 0);
  EXPECT_DOUBLE_EQ(result.mean_running, 1.0);
  // At 20 prompt tokens a decode step, each 40-token prompt's step takes 3.
  c.prefill_tokens_per_step = 20;
  result = simulate(workload, c);
  EXPECT_EQ(result.latencies, (std::vector<double>{22, 9, 302}));
  EXPECT_EQ(result.steps, 20 + 7 + 300);
}

// One slot, two long requests and then a short one: fcfs runs them in arrival order; sjf lets
// the short one go before the long one that waits (cold predictions are max_tokens, here each
// request's length; aging is slow enough that the long one has not earned its place by then);
// overtaking lets it suspend the running long one too.
TEST(ScheduleSimulation, PoliciesOrderAsTheSchedulerDoes) {
  const std::vector<SimulatedRequest> workload = {request(0, 300, 0), request(1, 320, 100),
                                                  request(2, 20, 200)};
  const auto sjf = [](double overtake) {
    SimulationConfig c = config(SchedulingPolicy::kSjf, 1, overtake);
    c.options.sjf_aging = 0.1;
    return c;
  };
  const auto order = [&](const SimulationConfig& c) {
    return finishing_order(workload, simulate(workload, c));
  };
  EXPECT_EQ(order(config(SchedulingPolicy::kFcfs, 1)), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(order(sjf(0)), (std::vector<size_t>{0, 2, 1}));
  const SimulationResult overtaken = simulate(workload, sjf(4));
  EXPECT_EQ(finishing_order(workload, overtaken), (std::vector<size_t>{2, 0, 1}));
  EXPECT_EQ(overtaken.suspensions, 1);
  EXPECT_EQ(overtaken.latencies[2], 20) << "it took the slot the step it arrived";
  EXPECT_EQ(overtaken.latencies[0], 320) << "suspended for 20 steps, nothing recomputed";
  EXPECT_EQ(overtaken.recomputed_tokens, 0);
}

TEST(ScheduleSimulation, EveryPolicyFinishesAMixedWorkloadUnderAPoolThatRunsDry) {
  const std::vector<SimulatedRequest> workload =
      mixed_workload({.requests = 600, .load = 1.0, .slots = 8, .seed = 2});
  for (const auto& [policy, overtake, reservation] :
       {std::tuple(SchedulingPolicy::kFcfs, 0.0, KvReservation::kNone),
        std::tuple(SchedulingPolicy::kSjf, 0.0, KvReservation::kNone),
        std::tuple(SchedulingPolicy::kSjf, 4.0, KvReservation::kNone),
        std::tuple(SchedulingPolicy::kSjf, 4.0, KvReservation::kPredicted),
        std::tuple(SchedulingPolicy::kFcfs, 0.0, KvReservation::kMax)}) {
    SimulationConfig c = config(policy, 8, overtake);
    c.options.kv_reservation = reservation;
    c.kv_blocks = 64;  // 1024 tokens: three long answers at their full length
    const SimulationResult result = simulate(workload, c);
    const std::string label = "policy " + std::to_string(static_cast<int>(policy)) + ", overtake " +
                              std::to_string(overtake) + ", reservation " +
                              std::to_string(static_cast<int>(reservation));
    for (size_t i = 0; i < workload.size(); ++i) {
      ASSERT_GE(result.latencies[i], workload[i].output_tokens) << label << ", request " << i;
    }
    EXPECT_EQ(result.empty_steps, 0) << label;
    EXPECT_LE(result.mean_running, 8) << label;
    if (reservation == KvReservation::kNone) {
      EXPECT_GT(result.preemptions, 0) << label;
    }
  }
}

TEST(ScheduleSimulation, RepeatsExactly) {
  const std::vector<SimulatedRequest> workload = mixed_workload({.requests = 300, .seed = 4});
  const SimulationConfig c = config(SchedulingPolicy::kSjf, 8, 4);
  const SimulationResult first = simulate(workload, c);
  const SimulationResult again = simulate(workload, c);
  EXPECT_EQ(first.latencies, again.latencies);
  EXPECT_EQ(first.suspensions, again.suspensions);
}

TEST(ScheduleSimulation, ARequestThatCannotFitIsAnErrorNamingIt) {
  SimulationConfig c = config(SchedulingPolicy::kFcfs, 8);
  c.context = 100;
  try {
    simulate({request(0, 20, 0), request(1, 300, 100)}, c);
    FAIL() << "40 + 300 tokens in a 100-token context were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("request 1 needs 340 tokens"), std::string::npos)
        << e.what();
  }
  c = config(SchedulingPolicy::kFcfs, 8);
  c.kv_blocks = 2;  // 32 tokens: the scheduler rejects a 40-token prompt
  try {
    simulate({request(0, 20, 0)}, c);
    FAIL() << "a prompt larger than the pool was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rejected"), std::string::npos) << e.what();
  }
}

TEST(ScheduleSimulation, MeanAndNearestRankPercentile) {
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 6}), 3);
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 99), 5);
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 40), 2);
  EXPECT_EQ(percentile({}, 50), 0);
}

}  // namespace
}  // namespace baton::schedule_sim
