// `baton bench schedule`: the scheduling policies compared on a simulated engine (tools/
// schedule_sim/), on docs/scheduling.md's mixed workload: mean and p99 latency in steps, free of
// a host's noise, over many seeds in seconds. What a policy does to a real server is `bench
// serve`'s to measure (tools/bench/compare_scheduling.py).

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/error.h"
#include "tools/commands.h"
#include "tools/option_flags.h"
#include "tools/schedule_sim/schedule_simulation.h"

namespace baton::cli {
namespace {

using schedule_sim::SimulationResult;

struct ScheduleBenchFlags {
  schedule_sim::WorkloadSpec workload;
  schedule_sim::SimulationConfig simulation;
  std::vector<double> loads = {0.9, 1.0};
  int32_t seeds = 5;
  int32_t kv_tokens = 2048;
  double step_ms = 10;
  std::vector<double> overtake = {4.0};
  std::vector<KvReservation> reservations = {KvReservation::kNone};
  bool json = false;
};

struct Variant {
  std::string name;
  SchedulingPolicy policy;
  double overtake;
  KvReservation reservation;
};

struct Figures {
  double mean = 0, p99 = 0, short_mean = 0, long_mean = 0, makespan = 0, steps = 0;
  double preemptions = 0, suspensions = 0, recomputed = 0, idle_slot_steps = 0, empty_steps = 0;
  double mean_running = 0;
};

std::vector<Variant> variants(const ScheduleBenchFlags& f) {
  std::vector<Variant> out;
  for (const KvReservation reservation : f.reservations) {
    const std::string suffix = reservation == KvReservation::kNone
                                   ? ""
                                   : std::string(", reservation ") + option_value_name(reservation);
    out.push_back({"fcfs" + suffix, SchedulingPolicy::kFcfs, 0, reservation});
    out.push_back({"sjf" + suffix, SchedulingPolicy::kSjf, 0, reservation});
    for (double ratio : f.overtake) {
      if (ratio == 0) continue;
      char label[64];
      std::snprintf(label, sizeof label, "sjf, overtake %g", ratio);
      out.push_back({label + suffix, SchedulingPolicy::kSjf, ratio, reservation});
    }
  }
  return out;
}

Figures figures(const SimulationResult& r, const std::vector<schedule_sim::SimulatedRequest>& w) {
  std::vector<double> short_latencies, long_latencies;
  for (size_t i = 0; i < w.size(); ++i) {
    (w[i].is_long ? long_latencies : short_latencies).push_back(r.latencies[i]);
  }
  return {.mean = schedule_sim::mean(r.latencies),
          .p99 = schedule_sim::percentile(r.latencies, 99),
          .short_mean = schedule_sim::mean(short_latencies),
          .long_mean = schedule_sim::mean(long_latencies),
          .makespan = r.time,
          .steps = static_cast<double>(r.steps),
          .preemptions = static_cast<double>(r.preemptions),
          .suspensions = static_cast<double>(r.suspensions),
          .recomputed = static_cast<double>(r.recomputed_tokens),
          .idle_slot_steps = static_cast<double>(r.idle_slot_steps),
          .empty_steps = static_cast<double>(r.empty_steps),
          .mean_running = r.mean_running};
}

nlohmann::json to_json(const Figures& f) {
  return {{"mean_latency_steps", f.mean},
          {"p99_latency_steps", f.p99},
          {"short_mean_latency_steps", f.short_mean},
          {"long_mean_latency_steps", f.long_mean},
          {"makespan_steps", f.makespan},
          {"steps", f.steps},
          {"preemptions", f.preemptions},
          {"suspensions", f.suspensions},
          {"recomputed_tokens", f.recomputed},
          {"idle_slot_steps", f.idle_slot_steps},
          {"empty_steps", f.empty_steps},
          {"mean_running", f.mean_running}};
}

// One load: every variant on the same seeds' workloads; ratios to the fcfs variant of the same
// reservation, averaged over the seeds.
nlohmann::json run_load(const ScheduleBenchFlags& f, double load) {
  const std::vector<Variant> all = variants(f);
  std::vector<std::vector<Figures>> per_seed(all.size());
  for (int32_t seed = 1; seed <= f.seeds; ++seed) {
    schedule_sim::WorkloadSpec spec = f.workload;
    spec.load = load;
    spec.slots = f.simulation.options.max_seqs;
    spec.prefill_tokens_per_step = f.simulation.prefill_tokens_per_step;
    spec.block_size = f.simulation.options.kv_block_size;
    spec.seed = static_cast<uint32_t>(seed);
    const auto workload = schedule_sim::mixed_workload(spec);
    for (size_t v = 0; v < all.size(); ++v) {
      schedule_sim::SimulationConfig config = f.simulation;
      config.kv_blocks = f.kv_tokens / config.options.kv_block_size;
      config.step_seconds = f.step_ms / 1000;
      config.options.scheduling_policy = all[v].policy;
      config.options.sjf_overtake = all[v].overtake;
      config.options.kv_reservation = all[v].reservation;
      per_seed[v].push_back(figures(schedule_sim::simulate(workload, config), workload));
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  size_t baseline = 0;
  for (size_t v = 0; v < all.size(); ++v) {
    if (all[v].policy == SchedulingPolicy::kFcfs) baseline = v;
    nlohmann::json seeds = nlohmann::json::array();
    std::vector<double> mean_ratio, p99_ratio, throughput_ratio;
    for (size_t s = 0; s < per_seed[v].size(); ++s) {
      const Figures& mine = per_seed[v][s];
      const Figures& fcfs = per_seed[baseline][s];
      mean_ratio.push_back(mine.mean / fcfs.mean);
      p99_ratio.push_back(mine.p99 / fcfs.p99);
      throughput_ratio.push_back(fcfs.makespan / mine.makespan);
      seeds.push_back(to_json(mine));
    }
    rows.push_back({{"load", load},
                    {"variant", all[v].name},
                    {"seeds", seeds},
                    {"mean_ratio", schedule_sim::mean(mean_ratio)},
                    {"mean_ratio_worst", *std::ranges::max_element(mean_ratio)},
                    {"p99_ratio", schedule_sim::mean(p99_ratio)},
                    {"p99_ratio_worst", *std::ranges::max_element(p99_ratio)},
                    {"throughput_ratio", schedule_sim::mean(throughput_ratio)}});
  }
  return rows;
}

double average(const nlohmann::json& seeds, const char* key) {
  double sum = 0;
  for (const auto& s : seeds) sum += s[key].get<double>();
  return sum / static_cast<double>(seeds.size());
}

void print(const ScheduleBenchFlags& f, const nlohmann::json& rows) {
  std::printf(
      "simulated engine: %d slots, %d KV tokens in blocks of %d, %g prompt tokens a decode step; "
      "%d requests (%.0f%% short), %d seeds; latencies in decode steps, averaged over the seeds; "
      "ratios to fcfs averaged over the seeds (worst seed in brackets)\n\n",
      f.simulation.options.max_seqs, f.kv_tokens, f.simulation.options.kv_block_size,
      f.simulation.prefill_tokens_per_step, f.workload.requests, 100 * f.workload.short_share,
      f.seeds);
  std::printf(
      "| load | policy | mean | p99 | short mean | long mean | mean vs fcfs | p99 vs fcfs | "
      "throughput vs fcfs | busy | preemptions | suspensions | idle-slot steps | stalled steps |\n"
      "|---:|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& row : rows) {
    const auto& seeds = row["seeds"];
    std::printf(
        "| %.2f | %s | %.0f | %.0f | %.0f | %.0f | %.2fx [%.2fx] | %.2fx [%.2fx] | %.3fx | %.0f%% "
        "| %.0f | %.0f | %.0f | %.0f |\n",
        row["load"].get<double>(), row["variant"].get<std::string>().c_str(),
        average(seeds, "mean_latency_steps"), average(seeds, "p99_latency_steps"),
        average(seeds, "short_mean_latency_steps"), average(seeds, "long_mean_latency_steps"),
        row["mean_ratio"].get<double>(), row["mean_ratio_worst"].get<double>(),
        row["p99_ratio"].get<double>(), row["p99_ratio_worst"].get<double>(),
        row["throughput_ratio"].get<double>(),
        100 * average(seeds, "mean_running") / f.simulation.options.max_seqs,
        average(seeds, "preemptions"), average(seeds, "suspensions"),
        average(seeds, "idle_slot_steps"), average(seeds, "empty_steps"));
  }
}

int run(const ScheduleBenchFlags& f) {
  const auto refuse = [](const std::string& flag, const std::string& rule, double value) {
    throw Error(ErrorCategory::kInvalidArgument,
                "bench schedule: " + flag + " must be " + rule + ", got " + std::to_string(value));
  };
  if (f.seeds < 1) refuse("--seeds", "at least 1", f.seeds);
  if (f.simulation.options.kv_block_size < 1)
    refuse("--kv-block-size", "at least 1", f.simulation.options.kv_block_size);
  if (f.kv_tokens < f.simulation.options.kv_block_size)
    refuse("--kv-tokens", "a block or more", f.kv_tokens);
  if (!(f.step_ms > 0)) refuse("--step-ms", "above 0", f.step_ms);
  if (!(f.simulation.prefill_tokens_per_step >= 0)) {
    refuse("--prefill-tokens-per-step", "0 or more", f.simulation.prefill_tokens_per_step);
  }
  nlohmann::json rows = nlohmann::json::array();
  for (double load : f.loads) {
    for (auto& row : run_load(f, load)) rows.push_back(std::move(row));
  }
  if (f.json) {
    std::cout << rows.dump(2) << "\n";
  } else {
    print(f, rows);
  }
  return 0;
}

}  // namespace

Action add_bench_schedule_command(CLI::App& bench) {
  auto f = std::make_shared<ScheduleBenchFlags>();
  f->simulation.options.max_seqs = 8;
  // The demo model on a 2-core host: 7,000 prompt tokens/s, 3.2 ms a step of 8 sequences.
  f->simulation.prefill_tokens_per_step = 22;
  CLI::App* cmd = bench.add_subcommand(
      "schedule",
      "compare scheduling policies on a simulated engine and the mixed workload (no model)");
  cmd->add_option("--load", f->loads, "arrival rates as fractions of what the slots serve")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--requests", f->workload.requests, "requests per run")->capture_default_str();
  cmd->add_option("--seeds", f->seeds, "workloads per load (seeds 1 to this)")
      ->capture_default_str();
  cmd->add_option("--short-share", f->workload.short_share, "share of short answers")
      ->capture_default_str();
  add_option_flag(*cmd, "max_seqs", f->simulation.options.max_seqs);
  cmd->add_option("--kv-tokens", f->kv_tokens, "KV cache pool in tokens")->capture_default_str();
  add_option_flag(*cmd, "kv_block_size", f->simulation.options.kv_block_size);
  cmd->add_option_function<std::vector<std::string>>(
         "--kv-reservation",
         [f](const std::vector<std::string>& names) {
           f->reservations.clear();
           for (const std::string& name : names) {
             try {
               f->reservations.push_back(
                   parse_option_value<KvReservation>("--kv-reservation", name));
             } catch (const Error& e) {
               throw CLI::ValidationError("--kv-reservation", e.what());
             }
           }
         },
         "reservations to compare, each as baton serve's --kv-reservation: none, predicted or max")
      ->delimiter(',')
      ->default_str("none");
  add_option_flag(*cmd, "sjf_aging", f->simulation.options.sjf_aging);
  cmd->add_option("--sjf-overtake", f->overtake, "overtake ratios of the sjf rows (0: none)")
      ->delimiter(',')
      ->capture_default_str();
  add_option_flag(*cmd, "sjf_max_wait_s", f->simulation.options.sjf_max_wait_s);
  cmd->add_option("--prefill-tokens-per-step", f->simulation.prefill_tokens_per_step,
                  "prompt tokens that take as long as a decode step (0: prompts cost nothing)")
      ->capture_default_str();
  cmd->add_option("--step-ms", f->step_ms, "milliseconds a step stands for (--sjf-max-wait)")
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print a JSON array of results, each seed's figures too");
  return [f] { return run(*f); };
}

}  // namespace baton::cli
