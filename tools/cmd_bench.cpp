#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "backends/cpu/matmul/matmul.h"
#include "baton/error.h"
#include "core/api/placement.h"
#include "tools/commands.h"
#include "tools/model_bench/benchmark.h"
#include "tools/model_bench/offline_throughput.h"
#include "tools/model_bench/roofline.h"
#include "tools/model_flags.h"
#include "tools/option_flags.h"

namespace baton::cli {
namespace {

struct BenchFlags {
  BenchOptions options;
  std::vector<int32_t> prompt = {512};
  std::vector<int32_t> generate = {128};
  int32_t repetitions = 5;
  bool json = false;
  bool roofline = false;
  uint64_t roofline_mib = 1024;
  std::string roofline_gemm = "512x5632x2048";
  int32_t roofline_runs = 5;
  bool serve_offline = false;
  OfflineThroughputOptions offline;
};

struct GemmShape {
  int64_t m, n, k;
};

GemmShape parse_gemm(const std::string& text) {
  GemmShape s{};
  char tail = 0;
  if (std::sscanf(text.c_str(), "%" SCNd64 "x%" SCNd64 "x%" SCNd64 "%c", &s.m, &s.n, &s.k, &tail) !=
      3) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--roofline-gemm '" + text + "' is not of the form MxNxK");
  }
  return s;
}

std::string format(const char* fmt, double a, double b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

std::string count_text(int64_t n) {
  return n >= 1e9 ? format("%.2f B", n / 1e9) : format("%.2f M", n / 1e6);
}

// One line per test as llama-bench prints them.
void print_table(const Benchmark& bench, int32_t threads, const std::vector<BenchResult>& results,
                 const Roofline* roofline) {
  const ModelCost& c = bench.cost();
  std::printf("| model | size | params | backend | threads | test | t/s | median |%s\n",
              roofline ? " roofline |" : "");
  std::printf("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |%s\n",
              roofline ? " ---: |" : "");
  for (const BenchResult& r : results) {
    std::printf("| %s %s | %s | %s | %s | %d | %s | %s | %s |", c.name.c_str(),
                std::string(to_string(c.weight_type)).c_str(),
                format("%.2f GiB", c.size_bytes / 1073741824.0).c_str(),
                count_text(c.n_params).c_str(), bench.backend_name().c_str(), threads,
                r.test.c_str(), format("%.2f ± %.2f", r.mean_tps, r.stddev_tps).c_str(),
                format("%.2f", r.median_tps).c_str());
    if (roofline) {
      const double fraction = roofline_fraction(r, c, *roofline);
      const std::string of =
          r.kind == BenchKind::kGeneration
              ? format("%.1f GB/s", read_bandwidth_for(r, *roofline) / 1e9)
              : format("%.0f GFLOP/s", roofline->matmul_flops.at(c.weight_type) / 1e9);
      std::printf(" %.1f%% of %s |", 100 * fraction, of.c_str());
    }
    std::printf("\n");
  }
}

// The matmul kernel the CPU backend runs for the model's main weight type on this host (at the
// active ISA level), or "" on another backend.
std::string cpu_kernel(const Benchmark& bench, const BenchFlags& f) {
  if (bench.backend_name() != "cpu") return "";
  return cpu::describe_matmul_path(bench.cost().weight_type, f.options.repack_weights);
}

nlohmann::json result_json(const Benchmark& bench, int32_t threads, const BenchResult& r,
                           const Roofline* roofline, uint64_t peak_rss) {
  const ModelCost& c = bench.cost();
  nlohmann::json j = {{"model", c.name},
                      {"weight_type", to_string(c.weight_type)},
                      {"size_bytes", c.size_bytes},
                      {"n_params", c.n_params},
                      {"backend", bench.backend_name()},
                      {"threads", threads},
                      {"test", r.test},
                      {"n_prompt", r.kind == BenchKind::kPrompt ? r.n_tokens : 0},
                      {"n_gen", r.kind == BenchKind::kGeneration ? r.n_tokens : 0},
                      {"samples_ts", r.samples_tps},
                      {"avg_ts", r.mean_tps},
                      {"stddev_ts", r.stddev_tps},
                      {"median_ts", r.median_tps},
                      {"peak_rss_bytes", peak_rss}};
  if (r.communication_fraction > 0) {
    j["communication_seconds_per_step"] = r.communication_seconds_per_step;
    j["communication_fraction"] = r.communication_fraction;
  }
  if (roofline) {
    j["roofline_fraction"] = roofline_fraction(r, c, *roofline);
    j["read_gbps"] = read_bandwidth_for(r, *roofline) / 1e9;
    if (!r.read_bytes_per_second.empty()) {
      std::vector<double> gbps;
      for (double bytes_per_second : r.read_bytes_per_second)
        gbps.push_back(bytes_per_second / 1e9);
      j["read_gbps_samples"] = gbps;  // one per entry of samples_ts, measured just before it
    }
    j["matmul_gflops"] = roofline->matmul_flops.at(c.weight_type) / 1e9;
  }
  return j;
}

Roofline measure_roofline(const BenchFlags& f, const ReadBandwidthProbe& probe,
                          const std::vector<DType>& types, bool verbose) {
  const GemmShape g = parse_gemm(f.roofline_gemm);
  Roofline r;
  r.read_bytes_per_second = probe.measure(f.roofline_runs);
  if (verbose) {
    std::printf("roofline: read bandwidth %.1f GB/s (%lu MiB buffer)\n",
                r.read_bytes_per_second / 1e9, static_cast<unsigned long>(f.roofline_mib));
  }
  for (DType t : types) {
    r.matmul_flops[t] = measure_matmul_flops(f.options.backend, f.options.threads, t, g.m, g.n, g.k,
                                             f.roofline_runs);
    if (verbose) {
      std::printf("roofline: matmul %s %s: %.1f GFLOP/s\n", std::string(to_string(t)).c_str(),
                  f.roofline_gemm.c_str(), r.matmul_flops[t] / 1e9);
    }
  }
  return r;
}

nlohmann::json offline_json(const OfflineThroughputResult& r) {
  return {{"concurrency", r.concurrency},
          {"seconds", r.seconds},
          {"output_tokens_per_s", r.output_tokens_per_s},
          {"requests_per_s", r.requests_per_s},
          {"mean_ttft_s", r.mean_ttft_s},
          {"mean_e2e_s", r.mean_e2e_s},
          {"grammar_share", r.grammar_share},
          {"grammar_engine_share", r.grammar_engine_share}};
}

// With a grammar: at each cap, the same requests unconstrained, with the masks computed after
// the model's step and beside it, side by side in one run.
int run_structured_offline(OfflineThroughputOptions o, bool json) {
  const std::string grammar = std::exchange(o.grammar, "");
  const std::vector<OfflineThroughputResult> plain = run_offline_throughput(o);
  o.grammar = grammar;
  o.grammar_masks = GrammarMasks::kAfter;
  const std::vector<OfflineThroughputResult> after = run_offline_throughput(o);
  o.grammar_masks = GrammarMasks::kBeside;
  const std::vector<OfflineThroughputResult> beside = run_offline_throughput(o);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < plain.size(); ++i) {
      out.push_back({{"unconstrained", offline_json(plain[i])},
                     {"masks_after_step", offline_json(after[i])},
                     {"masks_beside_step", offline_json(beside[i])}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf(
      "%d requests, ~%d prompt tokens, up to %d output tokens each; grammar share: of "
      "the run's time, on the engine's thread (all grammar work)\n",
      o.requests, o.prompt_tokens, o.output_tokens);
  std::printf(
      "| concurrency | unconstrained t/s | masks after step: t/s | grammar share | masks "
      "beside step: t/s | grammar share |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < plain.size(); ++i) {
    const double base = plain[i].output_tokens_per_s;
    std::printf("| %d | %.1f | %.1f (%.2fx) | %.1f%% | %.1f (%.2fx) | %.1f%% (%.1f%%) |\n",
                plain[i].concurrency, base, after[i].output_tokens_per_s,
                after[i].output_tokens_per_s / base, 100 * after[i].grammar_engine_share,
                beside[i].output_tokens_per_s, beside[i].output_tokens_per_s / base,
                100 * beside[i].grammar_engine_share, 100 * beside[i].grammar_share);
  }
  return 0;
}

// Requests through the engine at each concurrency cap; the first cap is the baseline.
int run_serve_offline(const BenchFlags& f) {
  if (f.options.parallel.tensor_parallel * f.options.parallel.pipeline_parallel > 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--serve-offline runs in one process; --tensor-parallel and "
                "--pipeline-parallel are for the pp/tg tests");
  }
  OfflineThroughputOptions o = f.offline;
  o.model = f.options.model;
  o.backend = f.options.backend;
  o.threads = f.options.threads;
  o.seed = f.options.seed;
  o.kv_cache_dtype = f.options.kv_cache_dtype;
  o.repack_weights = f.options.repack_weights;
  if (!o.grammar.empty()) return run_structured_offline(o, f.json);
  const std::vector<OfflineThroughputResult> results = run_offline_throughput(o);
  if (f.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const OfflineThroughputResult& r : results) out.push_back(offline_json(r));
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("%d requests, ~%d prompt tokens, %d output tokens each\n", o.requests,
              o.prompt_tokens, o.output_tokens);
  std::printf("| concurrency | output t/s | requests/s | mean TTFT s | mean e2e s | vs first |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const OfflineThroughputResult& r : results) {
    std::printf("| %d | %.1f | %.2f | %.3f | %.3f | %.2fx |\n", r.concurrency,
                r.output_tokens_per_s, r.requests_per_s, r.mean_ttft_s, r.mean_e2e_s,
                r.output_tokens_per_s / results.front().output_tokens_per_s);
  }
  return 0;
}

int32_t thread_count(const BenchFlags& f) {
  return f.options.threads > 0 ? f.options.threads
                               : static_cast<int32_t>(std::thread::hardware_concurrency());
}

// --roofline without a model: the host's read bandwidth and matmul peak for each weight type.
int run_host_roofline(const BenchFlags& f) {
  const std::vector<DType> all = {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                                  DType::kQ4_0};
  const Roofline r = measure_roofline(
      f, ReadBandwidthProbe(f.roofline_mib << 20, f.options.threads), all, !f.json);
  if (!f.json) return 0;
  const int32_t threads = thread_count(f);
  nlohmann::json out = nlohmann::json::array();
  out.push_back(
      {{"test", "read_bandwidth"}, {"threads", threads}, {"gbps", r.read_bytes_per_second / 1e9}});
  for (const auto& [t, flops] : r.matmul_flops) {
    out.push_back({{"test", "matmul_" + std::string(to_string(t))},
                   {"threads", threads},
                   {"shape", f.roofline_gemm},
                   {"gflops", flops / 1e9}});
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

// The pp runs (-p), then the tg runs (-n). With a probe, each tg run is held against the read
// bandwidth of its own moment, measured just before it.
std::vector<BenchResult> run_tests(Benchmark& bench, const BenchFlags& f,
                                   const std::optional<ReadBandwidthProbe>& probe) {
  std::vector<BenchResult> results;
  const auto run = [&](BenchKind kind, const std::vector<int32_t>& lengths) {
    for (int32_t n : lengths) {
      if (n == 0) continue;  // -p 0 / -n 0 skips that kind, as in llama-bench
      std::vector<double> bandwidth;
      std::function<void()> measure_bandwidth;
      if (probe && kind == BenchKind::kGeneration) {
        measure_bandwidth = [&] { bandwidth.push_back(probe->measure(f.roofline_runs)); };
      }
      results.push_back(bench.run(kind, n, f.repetitions, measure_bandwidth));
      results.back().read_bytes_per_second = std::move(bandwidth);
      std::fprintf(stderr, "%s: %.2f t/s\n", results.back().test.c_str(),
                   results.back().median_tps);
    }
  };
  run(BenchKind::kPrompt, f.prompt);
  run(BenchKind::kGeneration, f.generate);
  return results;
}

// What a model's bench measured, for either output format.
struct BenchReport {
  const Benchmark& bench;
  int32_t threads;
  std::vector<BenchResult> results;
  const Roofline* roofline;  // with --roofline
  uint64_t peak_rss;
  std::string kernel;  // see cpu_kernel
};

void print_json(const BenchReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchResult& result : report.results) {
    out.push_back(
        result_json(report.bench, report.threads, result, report.roofline, report.peak_rss));
    if (!report.kernel.empty()) out.back()["kernel"] = report.kernel;
  }
  std::cout << out.dump(2) << "\n";
}

void print_text(const BenchReport& report) {
  print_table(report.bench, report.threads, report.results, report.roofline);
  const bool any_tg =
      std::any_of(report.results.begin(), report.results.end(),
                  [](const BenchResult& b) { return b.kind == BenchKind::kGeneration; });
  if (report.roofline && any_tg) {
    std::printf(
        "tg roofline: each run against the read bandwidth measured just before it; "
        "the median of those fractions, and of those bandwidths\n");
  }
  for (const BenchResult& r : report.results) {
    if (r.communication_fraction == 0) continue;
    std::printf("%s: rank 0 communicated %.2f ms per step, %.1f%% of the run\n", r.test.c_str(),
                r.communication_seconds_per_step * 1e3, 100 * r.communication_fraction);
  }
  std::printf("peak RSS: %.1f MiB\n", report.peak_rss / 1048576.0);
  if (!report.kernel.empty()) {
    std::printf("%s matmul: %s\n", std::string(to_string(report.bench.cost().weight_type)).c_str(),
                report.kernel.c_str());
  }
}

// pp/tg throughput of a model, with --roofline as fractions of the host's peaks.
int run_model_bench(const BenchFlags& f) {
  // Made before the model, so its buffer is resident through every figure of peak RSS and can
  // be taken off it.
  std::optional<ReadBandwidthProbe> probe;
  BenchOptions options = f.options;
  for (int32_t n : f.prompt) options.max_context = std::max(options.max_context, n);
  for (int32_t n : f.generate) options.max_context = std::max(options.max_context, n + 1);
  if (is_follower_rank(LLMOptions{.parallel = options.parallel})) {
    Benchmark(options).follow();
    return 0;
  }
  if (f.roofline) probe.emplace(f.roofline_mib << 20, f.options.threads);
  Benchmark bench(options);
  std::vector<BenchResult> results = run_tests(bench, f, probe);
  const uint64_t probe_bytes = probe ? probe->bytes() : 0;
  const uint64_t peak_rss = std::max(peak_rss_bytes(), probe_bytes) - probe_bytes;
  std::optional<Roofline> roofline;
  if (probe) roofline = measure_roofline(f, *probe, {bench.cost().weight_type}, !f.json);
  const BenchReport report{.bench = bench,
                           .threads = thread_count(f),
                           .results = std::move(results),
                           .roofline = roofline ? &*roofline : nullptr,
                           .peak_rss = peak_rss,
                           .kernel = cpu_kernel(bench, f)};
  f.json ? print_json(report) : print_text(report);
  return 0;
}

int run_bench(const BenchFlags& f) {
  if (f.serve_offline) return run_serve_offline(f);
  if (!f.options.model.empty()) return run_model_bench(f);
  if (!f.roofline) throw Error(ErrorCategory::kInvalidArgument, "give -m MODEL or --roofline");
  return run_host_roofline(f);
}

}  // namespace

Action add_bench_command(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "measure prompt (pp) and generation (tg) throughput, llama-bench style");
  cmd->add_option("-m,--model", f->options.model, "GGUF file or Hugging Face checkpoint directory");
  cmd->add_option("-p,--n-prompt", f->prompt, "prompt lengths to prefill (0: none)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("-n,--n-gen", f->generate, "tokens to generate one at a time (0: none)")
      ->delimiter(',')
      ->capture_default_str();
  add_option_flag(*cmd, "threads", f->options.threads);
  cmd->add_option("-r,--repetitions", f->repetitions, "timed runs per test")->capture_default_str();
  add_option_flag(*cmd, "backend", f->options.backend);
  cmd->add_option("--seed", f->options.seed, "seed of the random tokens")->capture_default_str();
  add_option_flag(*cmd, "kv_cache_dtype", f->options.kv_cache_dtype);
  add_option_flag(*cmd, "repack_weights", f->options.repack_weights);
  cmd->add_flag("--json", f->json, "print a JSON array of results");
  add_parallel_flags(*cmd, f->options.parallel);
  cmd->add_flag("--roofline", f->roofline,
                "measure read bandwidth and matmul peak; show each result as a fraction of them");
  cmd->add_option("--roofline-mib", f->roofline_mib, "bandwidth buffer size in MiB")
      ->capture_default_str();
  cmd->add_option("--roofline-gemm", f->roofline_gemm, "matmul shape MxNxK")->capture_default_str();
  cmd->add_option("--roofline-runs", f->roofline_runs, "runs per roofline figure (best counts)")
      ->capture_default_str();
  cmd->add_flag("--serve-offline", f->serve_offline,
                "throughput of many requests through the engine at each --concurrency");
  cmd->add_option("--concurrency", f->offline.concurrency, "sequences per step (serve-offline)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--requests", f->offline.requests, "requests (serve-offline)")
      ->capture_default_str();
  cmd->add_option("--prompt-tokens", f->offline.prompt_tokens, "prompt tokens (serve-offline)")
      ->capture_default_str();
  cmd->add_option("--output-tokens", f->offline.output_tokens, "output tokens (serve-offline)")
      ->capture_default_str();
  // serve-offline: structured outputs' cost, with the share of time their masks take.
  add_output_constraint_flags(*cmd, f->offline.grammar);
  const Action serve = add_bench_serve_command(*cmd);
  const Action grammar = add_bench_grammar_command(*cmd);
  const Action schedule = add_bench_schedule_command(*cmd);
  return [f, cmd, serve, grammar, schedule] {
    if (cmd->got_subcommand("serve")) return serve();
    if (cmd->got_subcommand("grammar")) return grammar();
    if (cmd->got_subcommand("schedule")) return schedule();
    if (!f->options.model.empty()) f->options.model = resolve_model_path(f->options.model);
    return run_bench(*f);
  };
}

}  // namespace baton::cli
