#include "tools/bench_serve/report.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace baton::bench_serve {
namespace {

constexpr double kMsPerS = 1000.0;

std::string printf_string(const char* fmt, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, value);
  return buf;
}

std::string latency_row(const char* name, const LatencySummary& s) {
  return "| " + std::string(name) + " | " + printf_string("%.2f", s.mean) + " | " +
         printf_string("%.2f", s.p50) + " | " + printf_string("%.2f", s.p90) + " | " +
         printf_string("%.2f", s.p99) + " |\n";
}

nlohmann::json latency_json(const LatencySummary& s, bool measured) {
  if (!measured) return nullptr;
  return {{"count", s.count}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}};
}

}  // namespace

BenchReport make_report(const RunDescription& run, const LoadResult& load) {
  BenchReport report{.run = run, .duration_s = load.duration_s};
  std::vector<double> ttft, tpot, itl, e2e;
  int64_t with_usage = 0;
  for (const RequestResult& r : load.requests) {
    if (!r.ok) {
      if (report.failed++ == 0) report.first_error = r.error;
      continue;
    }
    ++report.completed;
    report.total_output_tokens += r.output_tokens;
    if (r.prompt_tokens >= 0) {
      report.total_prompt_tokens += r.prompt_tokens;
      ++with_usage;
    }
    e2e.push_back(r.e2e_s * kMsPerS);
    if (!run.stream) continue;
    ttft.push_back(r.ttft_s * kMsPerS);
    if (r.output_tokens > 1) {
      tpot.push_back((r.e2e_s - r.ttft_s) * kMsPerS / static_cast<double>(r.output_tokens - 1));
    }
    for (const double gap : r.itl_s) itl.push_back(gap * kMsPerS);
  }
  if (load.duration_s > 0) {
    report.requests_per_s = static_cast<double>(report.completed) / load.duration_s;
    report.output_tokens_per_s = static_cast<double>(report.total_output_tokens) / load.duration_s;
    report.total_tokens_per_s =
        static_cast<double>(report.total_prompt_tokens + report.total_output_tokens) /
        load.duration_s;
  }
  if (with_usage > 0) {
    report.mean_prompt_tokens =
        static_cast<double>(report.total_prompt_tokens) / static_cast<double>(with_usage);
  }
  if (report.completed > 0) {
    report.mean_output_tokens =
        static_cast<double>(report.total_output_tokens) / static_cast<double>(report.completed);
  }
  report.ttft_ms = summarize(std::move(ttft));
  report.tpot_ms = summarize(std::move(tpot));
  report.itl_ms = summarize(std::move(itl));
  report.e2e_ms = summarize(std::move(e2e));
  return report;
}

std::string format_table(const BenchReport& r) {
  const RunDescription& run = r.run;
  std::string out = "baton bench serve: " + run.url + run.endpoint + ", model " + run.model +
                    (run.stream ? ", streaming" : ", not streaming") + ", concurrency " +
                    std::to_string(run.concurrency) + ", request rate " +
                    (std::isinf(run.request_rate) ? std::string("inf")
                                                  : printf_string("%.2f", run.request_rate)) +
                    " req/s\n\n";
  out += "| result | value |\n| --- | ---: |\n";
  out += "| requests completed | " + std::to_string(r.completed) + " |\n";
  out += "| requests failed | " + std::to_string(r.failed) + " |\n";
  out += "| duration s | " + printf_string("%.2f", r.duration_s) + " |\n";
  out += "| requests/s | " + printf_string("%.2f", r.requests_per_s) + " |\n";
  out += "| output tok/s | " + printf_string("%.1f", r.output_tokens_per_s) + " |\n";
  out += "| total tok/s | " + printf_string("%.1f", r.total_tokens_per_s) + " |\n";
  out += "| mean prompt tokens | " +
         (r.mean_prompt_tokens ? printf_string("%.1f", *r.mean_prompt_tokens)
                               : std::string("not reported")) +
         " |\n";
  out += "| mean output tokens | " + printf_string("%.1f", r.mean_output_tokens) + " |\n";
  if (r.preemptions && r.recomputed_tokens) {
    out += "| preemptions | " + std::to_string(*r.preemptions) + " |\n";
    out += "| recomputed tokens | " + std::to_string(*r.recomputed_tokens) + " |\n";
  }
  if (r.suspensions) out += "| suspensions | " + std::to_string(*r.suspensions) + " |\n";
  if (r.failed > 0) out += "\nfirst error: " + r.first_error + "\n";
  if (r.completed == 0) return out;
  out += "\n| latency ms | mean | p50 | p90 | p99 |\n| --- | ---: | ---: | ---: | ---: |\n";
  if (run.stream) {
    out += latency_row("TTFT", r.ttft_ms);
    out += latency_row("TPOT", r.tpot_ms);
    out += latency_row("ITL", r.itl_ms);
  }
  out += latency_row("e2e", r.e2e_ms);
  return out;
}

nlohmann::json report_json(const BenchReport& r) {
  const RunDescription& run = r.run;
  return {
      {"url", run.url},
      {"endpoint", run.endpoint},
      {"model", run.model},
      {"stream", run.stream},
      {"concurrency", run.concurrency},
      // JSON has no infinity; null means "all at once".
      {"request_rate",
       std::isinf(run.request_rate) ? nlohmann::json(nullptr) : nlohmann::json(run.request_rate)},
      {"completed", r.completed},
      {"failed", r.failed},
      {"first_error", r.failed > 0 ? nlohmann::json(r.first_error) : nlohmann::json(nullptr)},
      {"duration_s", r.duration_s},
      {"requests_per_s", r.requests_per_s},
      {"output_tokens_per_s", r.output_tokens_per_s},
      {"total_tokens_per_s", r.total_tokens_per_s},
      {"total_prompt_tokens", r.total_prompt_tokens},
      {"total_output_tokens", r.total_output_tokens},
      {"mean_prompt_tokens",
       r.mean_prompt_tokens ? nlohmann::json(*r.mean_prompt_tokens) : nlohmann::json(nullptr)},
      {"mean_output_tokens", r.mean_output_tokens},
      {"ttft_ms", latency_json(r.ttft_ms, run.stream)},
      {"tpot_ms", latency_json(r.tpot_ms, run.stream)},
      {"itl_ms", latency_json(r.itl_ms, run.stream)},
      {"e2e_ms", latency_json(r.e2e_ms, true)},
      {"preemptions", r.preemptions ? nlohmann::json(*r.preemptions) : nlohmann::json(nullptr)},
      {"recomputed_tokens",
       r.recomputed_tokens ? nlohmann::json(*r.recomputed_tokens) : nlohmann::json(nullptr)},
      {"suspensions", r.suspensions ? nlohmann::json(*r.suspensions) : nlohmann::json(nullptr)},
  };
}

}  // namespace baton::bench_serve
