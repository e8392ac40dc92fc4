#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>

#include "baton/error.h"
#include "tools/bench_serve/load_generator.h"
#include "tools/bench_serve/prompt_dataset.h"
#include "tools/bench_serve/report.h"
#include "tools/bench_serve/server_counters.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

using namespace baton::bench_serve;

struct ServeBenchFlags {
  LoadOptions load;
  std::string model;
  int64_t requests = 64;
  int32_t prompt_tokens = 100;
  int32_t output_tokens = 64;
  std::string dataset;
  bool no_ignore_eos = false;
  bool json = false;
};

int run_bench_serve(ServeBenchFlags f) {
  LoadOptions& o = f.load;
  o.generation.ignore_eos = !f.no_ignore_eos;
  if (o.endpoint.empty() || o.endpoint.front() != '/') o.endpoint.insert(0, "/");
  // Dataset errors are local and cheap, so they come before touching the server.
  std::vector<Prompt> prompts =
      f.dataset.empty() ? random_prompts(f.requests, f.prompt_tokens, f.output_tokens, o.seed)
                        : load_prompt_dataset(f.dataset, f.requests, f.output_tokens);
  // Several models (LoRA adapters of one base) take the requests in turn.
  if (const size_t comma = f.model.find(','); comma != std::string::npos) {
    std::vector<std::string> models;
    for (size_t start = 0; start <= f.model.size();) {
      const size_t end = std::min(f.model.find(',', start), f.model.size());
      models.push_back(f.model.substr(start, end - start));
      start = end + 1;
    }
    for (size_t i = 0; i < prompts.size(); ++i) prompts[i].model = models[i % models.size()];
  }
  const std::optional<std::string> listed = probe_server(o);
  o.generation.model = f.model.empty() ? listed.value_or("") : f.model;
  if (o.generation.model.empty()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the server at " + o.url + " lists no model at /v1/models; give --model");
  }
  if (!f.json) {
    std::fprintf(stderr, "sending %lld requests to %s%s ...\n",
                 static_cast<long long>(prompts.size()), o.url.c_str(), o.endpoint.c_str());
  }
  const std::optional<ServerCounters> before = scrape_server_counters(o);
  const LoadResult load = run_load(o, prompts);
  const std::optional<ServerCounters> after = scrape_server_counters(o);
  BenchReport report = make_report({.url = o.url,
                                    .endpoint = o.endpoint,
                                    .model = o.generation.model,
                                    .stream = o.generation.stream,
                                    .concurrency = o.concurrency,
                                    .request_rate = o.request_rate},
                                   load);
  if (before && after) {
    report.preemptions = after->preemptions - before->preemptions;
    report.recomputed_tokens = after->recomputed_tokens - before->recomputed_tokens;
    if (before->suspensions && after->suspensions) {
      report.suspensions = *after->suspensions - *before->suspensions;
    }
  }
  if (f.json) {
    std::cout << report_json(report).dump(2) << "\n";
  } else {
    std::cout << format_table(report);
  }
  return report.completed > 0 ? 0 : 1;
}

}  // namespace

Action add_bench_serve_command(CLI::App& bench) {
  auto f = std::make_shared<ServeBenchFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "serve",
      "load-test any OpenAI-compatible server (baton serve, llama-server, vLLM): throughput, "
      "TTFT, TPOT, ITL and end-to-end latency percentiles; exits 1 when no request completes");
  cmd->add_option("--url", f->load.url, "server base URL, e.g. http://127.0.0.1:8000")->required();
  cmd->add_option("--endpoint", f->load.endpoint, "/v1/completions or /v1/chat/completions")
      ->capture_default_str();
  cmd->add_option("--model", f->model,
                  "model name to send, or several separated by commas, which the requests take in "
                  "turn (LoRA adapters; default: first of GET /v1/models)");
  cmd->add_option("--api-key", f->load.api_key, "bearer token")->envname("OPENAI_API_KEY");
  cmd->add_option("--requests", f->requests, "requests to send")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--concurrency", f->load.concurrency, "requests in flight at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--request-rate", f->load.request_rate,
                  "requests per second, Poisson arrivals (default: all at once)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--prompt-tokens", f->prompt_tokens, "words per random prompt (~tokens)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--output-tokens", f->output_tokens, "max_tokens of each request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--dataset", f->dataset,
                  "JSONL of {\"prompt\", \"max_tokens\"} or a ShareGPT JSON array, cycled "
                  "(default: random words)");
  cmd->add_flag("--stream", f->load.generation.stream, "stream responses; measures TTFT and ITL");
  cmd->add_option("--temperature", f->load.generation.temperature, "sampling temperature")
      ->capture_default_str();
  cmd->add_flag("--no-ignore-eos", f->no_ignore_eos,
                "let requests stop at end-of-sequence (default sends ignore_eos)");
  cmd->add_option("--seed", f->load.seed, "seed of the random prompts and arrival times")
      ->capture_default_str();
  cmd->add_option("--timeout", f->load.timeout_s,
                  "seconds of server silence before a request fails")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print one JSON object instead of the tables");
  return [f] { return run_bench_serve(*f); };
}

}  // namespace baton::cli
