#include "tools/model_bench/benchmark.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <span>

#include "baton/error.h"
#include "core/api/placement.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/backend_registry.h"
#include "core/serving/engine/engine.h"
#include "core/serving/engine/step_runner.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "models/model.h"

namespace baton {
namespace {

// llama-bench's default micro-batch: long prompts run in steps of this many tokens.
constexpr int32_t kPrefillChunk = 512;
constexpr int32_t kKvBlockSize = 16;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int32_t argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

void summarize(BenchResult& r) {
  const std::vector<double>& s = r.samples_tps;
  const double n = static_cast<double>(s.size());
  r.mean_tps = std::accumulate(s.begin(), s.end(), 0.0) / n;
  double squares = 0;
  for (double v : s) squares += (v - r.mean_tps) * (v - r.mean_tps);
  r.stddev_tps = s.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  r.median_tps = median(s);
}

LLMOptions placement_options(const BenchOptions& o) {
  return LLMOptions{.model = o.model,
                    .backend = o.backend,
                    .threads = o.threads,
                    .kv_cache_dtype = o.kv_cache_dtype,
                    .repack_weights = o.repack_weights,
                    .parallel = o.parallel};
}

EngineConfig cache_config(const BenchOptions& o) {
  EngineConfig config;
  config.options.kv_block_size = kKvBlockSize;
  config.options.kv_cache_dtype = o.kv_cache_dtype;
  config.n_blocks = (o.max_context + kKvBlockSize - 1) / kKvBlockSize;
  return config;
}

// One timed run: its tokens per second and the leader's seconds in communication.
struct Timed {
  double tps;
  double communication_seconds;
};

}  // namespace

bool read_whole_per_decode_step(std::string_view tensor, bool tied_output) {
  return tensor != "token_embd.weight" || tied_output;
}

ModelCost model_cost(const gguf::GgufFile& file) {
  ModelCost cost;
  cost.name = file.find_string("general.name").value_or(file.path().stem().string());
  const bool tied = file.find_tensor("output.weight") == nullptr;
  std::map<uint32_t, uint64_t> matrix_bytes;
  for (const gguf::TensorInfo& t : file.tensors()) {
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    cost.n_params += numel;
    cost.size_bytes += t.nbytes;
    if (read_whole_per_decode_step(t.name, tied)) cost.decode_bytes += t.nbytes;
    if (t.shape.size() == 2) matrix_bytes[t.ggml_type] += t.nbytes;
    if (t.shape.size() == 2 && t.name.starts_with("blk.")) cost.prefill_params += numel;
  }
  const auto most =
      std::max_element(matrix_bytes.begin(), matrix_bytes.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == matrix_bytes.end() || !dtype_from_ggml_type(most->first)) {
    throw Error(ErrorCategory::kInvalidModel,
                file.path().string() + ": no weight matrices of a type Baton runs");
  }
  cost.weight_type = *dtype_from_ggml_type(most->first);
  return cost;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

struct Benchmark::Impl {
  gguf::GgufFile file;
  ModelCost cost;
  std::unique_ptr<Backend> backend;
  Placement placement;
  std::unique_ptr<Model> model;
  std::mt19937_64 rng;
  int32_t max_context;
  // One cache and runner for every test: on a distributed model the followers run the leader's
  // steps until it destroys its runner.
  PagedKvCache cache;
  StepRunner runner;

  explicit Impl(const BenchOptions& o)
      : file(gguf::GgufFile::open(o.model)),
        cost(model_cost(file)),
        backend(BackendRegistry::global().create(
            o.backend.empty() ? default_backend_name() : o.backend,
            BackendOptions{.threads = o.threads, .prepack_weights = o.repack_weights})),
        placement(place_process(placement_options(o), file)),
        model(load_model(file, *backend, placement.shard)),
        rng(o.seed),
        max_context(o.max_context),
        cache(kv_cache_shape(*model, cache_config(o)), *backend),
        runner(*model, *backend, cache, placement.replica) {}

  // The leader's seconds in communication so far, over every group it belongs to.
  double communication_seconds() const {
    const ReplicaGroup* group = placement.replica.get();
    if (!group) return 0;
    double seconds = group->replica->seconds_in_operations();
    for (const auto& part : {group->tensor, group->pipeline}) {
      if (part) seconds += part->seconds_in_operations();
    }
    return seconds;
  }

  std::vector<int32_t> random_tokens(int32_t n) {
    std::uniform_int_distribution<int32_t> pick(0, model->config().n_vocab - 1);
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& t : tokens) t = pick(rng);
    return tokens;
  }

  // One timed run on a fresh sequence.
  Timed run_once(BenchKind kind, int32_t n_tokens) {
    const int32_t context = kind == BenchKind::kPrompt ? n_tokens : n_tokens + 1;
    if (context > max_context) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "a test of " + std::to_string(context) + " tokens exceeds the " +
                      std::to_string(max_context) + " the benchmark was sized for");
    }
    SoloSequence sequence(runner, context);
    if (kind == BenchKind::kPrompt) {
      const std::vector<int32_t> tokens = random_tokens(n_tokens);
      return timed(n_tokens, [&] {
        for (int32_t first = 0; first < n_tokens; first += kPrefillChunk) {
          const auto count = std::min(kPrefillChunk, n_tokens - first);
          sequence.step(std::span<const int32_t>(tokens).subspan(first, count), {count - 1});
        }
      });
    }
    // Greedy decode steps from a 1-token context, timing the steps only.
    std::vector<float> logits = sequence.step(random_tokens(1), {0});
    return timed(n_tokens, [&] {
      for (int32_t i = 0; i < n_tokens; ++i) {
        const int32_t next = argmax(logits);
        logits = sequence.step(std::span(&next, 1), {0});
      }
    });
  }

  template <typename Steps>
  Timed timed(int32_t n_tokens, Steps steps) {
    const double communication = communication_seconds();
    const Clock::time_point start = Clock::now();
    steps();
    const double seconds = seconds_since(start);
    return {n_tokens / seconds, communication_seconds() - communication};
  }
};

Benchmark::Benchmark(const BenchOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Benchmark::~Benchmark() = default;

const ModelCost& Benchmark::cost() const {
  return impl_->cost;
}

std::string Benchmark::backend_name() const {
  return std::string(impl_->backend->name());
}

bool Benchmark::follower() const {
  const ReplicaGroup* group = impl_->placement.replica.get();
  return group && group->replica->rank() != 0;
}

void Benchmark::follow() {
  impl_->runner.follow();
}

BenchResult Benchmark::run(BenchKind kind, int32_t n_tokens, int32_t repetitions,
                           const std::function<void()>& before_each) {
  if (n_tokens <= 0 || repetitions <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a benchmark needs positive token and repetition counts, got " +
                    std::to_string(n_tokens) + " tokens x " + std::to_string(repetitions));
  }
  BenchResult result{.kind = kind,
                     .n_tokens = n_tokens,
                     .test = (kind == BenchKind::kPrompt ? "pp" : "tg") + std::to_string(n_tokens)};
  impl_->run_once(kind, kind == BenchKind::kPrompt ? n_tokens : 1);
  double seconds = 0, communication = 0;
  for (int32_t i = 0; i < repetitions; ++i) {
    if (before_each) before_each();
    const Timed run = impl_->run_once(kind, n_tokens);
    result.samples_tps.push_back(run.tps);
    seconds += n_tokens / run.tps;
    communication += run.communication_seconds;
  }
  const int32_t steps_per_run =
      kind == BenchKind::kPrompt ? (n_tokens + kPrefillChunk - 1) / kPrefillChunk : n_tokens;
  result.communication_seconds_per_step = communication / (repetitions * steps_per_run);
  result.communication_fraction = communication / seconds;
  summarize(result);
  return result;
}

}  // namespace baton
