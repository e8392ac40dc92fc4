#include "tools/schedule_sim/schedule_simulation.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>

#include "baton/error.h"
#include "core/serving/engine/length_predictor.h"

namespace baton::schedule_sim {
namespace {

struct Live {
  size_t index;  // in the workload
  SeqId seq;
  LengthFeatures features;
  double arrival_prediction = 0;  // what the trust in predictions is judged on, as the engine's
  bool cold = false;              // predicted before anything was learned: max_tokens
};

class Simulation {
 public:
  Simulation(const std::vector<SimulatedRequest>& workload, const SimulationConfig& config)
      : workload_(workload),
        config_(config),
        blocks_(config.kv_blocks, config.options.kv_block_size, config.options.prefix_caching),
        scheduler_(config.options, blocks_, config.context,
                   [this] { return now_ * config_.step_seconds; }) {
    result_.latencies.assign(workload.size(), -1);
  }

  SimulationResult run() {
    // Far more steps than running each request alone takes: a scheduler that stops admitting, or
    // preempts in a loop, ends here.
    int64_t step_limit = 1000;
    for (const SimulatedRequest& r : workload_) step_limit += 2 * (r.output_tokens + 2);
    double running = 0;
    while (next_ < workload_.size() || !scheduler_.empty()) {
      if (scheduler_.empty()) now_ = std::max(now_, workload_[next_].arrival);
      arrive();
      now_ += step();
      running += static_cast<double>(scheduler_.running_count());
      finish();
      if (++result_.steps > step_limit) {
        throw Error(
            ErrorCategory::kInternal,
            "schedule simulation did not end: " + std::to_string(scheduler_.waiting_count()) +
                " requests wait and " + std::to_string(scheduler_.running_count()) + " run after " +
                std::to_string(result_.steps) + " steps");
      }
    }
    result_.time = now_;
    result_.mean_running = running / static_cast<double>(std::max<int64_t>(result_.steps, 1));
    result_.preemptions = scheduler_.preemption_count();
    result_.suspensions = scheduler_.suspension_count();
    result_.recomputed_tokens = scheduler_.recomputed_tokens();
    return std::move(result_);
  }

 private:
  void arrive() {
    for (; next_ < workload_.size() && workload_[next_].arrival <= now_; ++next_) {
      const SimulatedRequest& r = workload_[next_];
      Live live{.index = next_, .seq = next_ + 1};
      auto s = std::make_unique<Sequence>();
      s->id = s->seq = s->arrival = live.seq;
      s->tokens = r.prompt;
      s->prompt_length = static_cast<int32_t>(r.prompt.size());
      s->max_output = r.output_tokens;
      live.features = {.prefix_keys = prefix_keys(r.prompt, config_.options.kv_block_size),
                       .max_tokens = r.output_tokens};
      const LengthPrediction prediction = predictor_.predict(live.features);
      s->predicted_output = live.arrival_prediction = prediction.tokens;
      live.cold = prediction.confidence == 0;
      scheduler_.add(std::move(s));
      live_.push_back(std::move(live));
    }
  }

  // Runs a plan; how long it took. A plan with nothing to compute launches nothing.
  double step() {
    const StepPlan plan = scheduler_.schedule();
    if (!plan.rejected.empty()) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "schedule simulation: a request was rejected: " + plan.rejected.front().reason);
    }
    StepResults results;
    for (const ScheduledChunk& c : plan.chunks) {
      if (c.needs_logits) results.tokens.push_back({c.seq, 0});
    }
    scheduler_.update_from_output(plan, results);
    int32_t prompt_tokens = 0;
    for (const ScheduledChunk& c : plan.chunks) {
      const Sequence& s = scheduler_.planned(c.seq);
      // Anything but the decode of the last sampled token is prompt work: prefill, recompute.
      if (c.count > 1 || c.first < s.prompt_length) prompt_tokens += c.count;
    }
    if (plan.chunks.empty()) {
      ++result_.empty_steps;
      return 0;
    }
    if (scheduler_.waiting_count() > 0 &&
        scheduler_.running_count() < static_cast<size_t>(config_.options.max_seqs)) {
      ++result_.idle_slot_steps;
    }
    if (config_.prefill_tokens_per_step <= 0) return 1;
    return 1 + prompt_tokens / config_.prefill_tokens_per_step;
  }

  void finish() {
    bool learned = false;
    for (auto it = live_.begin(); it != live_.end();) {
      const Sequence& s = scheduler_.planned(it->seq);
      const SimulatedRequest& r = workload_[it->index];
      if (s.generated() < r.output_tokens) {
        ++it;
        continue;
      }
      result_.latencies[it->index] = now_ - r.arrival;
      predictor_.observe(it->features, s.generated());
      log_.add(it->arrival_prediction, s.generated());
      if (log_.trust_due()) scheduler_.trust_predictions(log_.kendall_tau() >= kMinTrustedTau);
      scheduler_.remove(it->seq);
      it = live_.erase(it);
      learned = true;
    }
    if (learned) refresh_cold_predictions();
  }

  // As the engine does: requests that arrived before anything was learned are predicted again
  // while they wait.
  void refresh_cold_predictions() {
    for (Live& live : live_) {
      const Sequence& s = scheduler_.planned(live.seq);
      if (!live.cold || s.status != SequenceStatus::kWaiting || s.generated() > 0) continue;
      const LengthPrediction prediction = predictor_.predict(live.features);
      live.arrival_prediction = prediction.tokens;
      scheduler_.set_predicted_output(live.seq, prediction.tokens);
      live.cold = prediction.confidence == 0;
    }
  }

  const std::vector<SimulatedRequest>& workload_;
  SimulationConfig config_;
  BlockManager blocks_;
  double now_ = 0;  // in decode steps
  Scheduler scheduler_;
  OnlineLengthPredictor predictor_;
  PredictionLog log_;
  std::vector<Live> live_;
  size_t next_ = 0;
  SimulationResult result_;
};

}  // namespace

SimulationResult simulate(const std::vector<SimulatedRequest>& workload,
                          const SimulationConfig& config) {
  for (size_t i = 0; i < workload.size(); ++i) {
    const size_t length = workload[i].prompt.size() + workload[i].output_tokens;
    if (length > static_cast<size_t>(config.context)) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "schedule simulation: request " + std::to_string(i) + " needs " +
                      std::to_string(length) + " tokens; the context holds " +
                      std::to_string(config.context));
    }
  }
  if (workload.empty()) return {};
  return Simulation(workload, config).run();
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

}  // namespace baton::schedule_sim
