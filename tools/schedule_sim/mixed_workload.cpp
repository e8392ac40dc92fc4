#include "tools/schedule_sim/mixed_workload.h"

#include <random>
#include <string>

#include "baton/error.h"

namespace baton::schedule_sim {
namespace {

constexpr int32_t kSystemPrompts = 3;  // the last one is for long answers

std::vector<int32_t> prompt(const WorkloadSpec& spec, int32_t system_prompt, int32_t request) {
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < spec.system_prompt_tokens; ++i)
    tokens.push_back(1000 * system_prompt + i);
  // Questions differ from every other request's, so that only the system prompt is shared.
  const int32_t first = 100000 + request * spec.question_tokens;
  for (int32_t i = 0; i < spec.question_tokens; ++i) tokens.push_back(first + i);
  return tokens;
}

}  // namespace

std::vector<SimulatedRequest> mixed_workload(const WorkloadSpec& spec) {
  if (spec.requests < 1 || !(spec.load > 0) || spec.slots < 1 || spec.short_min < 1 ||
      !(spec.prefill_tokens_per_step >= 0) || spec.block_size < 1 ||
      spec.short_min > spec.short_max || spec.long_min > spec.long_max || spec.short_share < 0 ||
      spec.short_share > 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "schedule simulation: a workload needs at least one request (" +
                    std::to_string(spec.requests) + "), a load above 0 (" +
                    std::to_string(spec.load) + "), a slot (" + std::to_string(spec.slots) +
                    "), a short share from 0 to 1 (" + std::to_string(spec.short_share) +
                    ") and output ranges from 1 up (" + std::to_string(spec.short_min) + "-" +
                    std::to_string(spec.short_max) + ", " + std::to_string(spec.long_min) + "-" +
                    std::to_string(spec.long_max) + ")");
  }
  const double mean_output = spec.short_share * (spec.short_min + spec.short_max) / 2.0 +
                             (1 - spec.short_share) * (spec.long_min + spec.long_max) / 2.0;
  std::mt19937 random(spec.seed);
  const int32_t cached = spec.system_prompt_tokens / spec.block_size * spec.block_size;
  const double uncached = spec.system_prompt_tokens + spec.question_tokens - cached;
  const double prompt_steps =
      spec.prefill_tokens_per_step > 0 ? uncached / spec.prefill_tokens_per_step : 0;
  std::exponential_distribution<double> gap(spec.load / (mean_output / spec.slots + prompt_steps));
  std::bernoulli_distribution is_long(1 - spec.short_share);
  std::vector<SimulatedRequest> requests;
  double arrival = 0;
  for (int32_t i = 0; i < spec.requests; ++i) {
    SimulatedRequest r;
    r.arrival = arrival;
    r.is_long = is_long(random);
    const int32_t lowest = r.is_long ? spec.long_min : spec.short_min;
    const int32_t highest = r.is_long ? spec.long_max : spec.short_max;
    r.output_tokens = std::uniform_int_distribution<int32_t>(lowest, highest)(random);
    const int32_t system_prompt =
        r.is_long ? kSystemPrompts - 1 : std::uniform_int_distribution<int32_t>(0, 1)(random);
    r.prompt = prompt(spec, system_prompt, i);
    requests.push_back(std::move(r));
    arrival += gap(random);
  }
  return requests;
}

}  // namespace baton::schedule_sim
