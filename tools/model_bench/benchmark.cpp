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
#include "core/backend_registry.h"
#include "core/engine/step_runner.h"
#include "core/gguf/gguf_file.h"
#include "core/kv_cache/paged_kv_cache.h"
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

}  // namespace

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
    const bool embedding = t.name == "token_embd.weight";
    if (!embedding || tied) cost.decode_bytes += t.nbytes;
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
  std::unique_ptr<Model> model;
  std::mt19937_64 rng;
  DType kv_dtype;

  explicit Impl(const BenchOptions& o)
      : file(gguf::GgufFile::open(o.model)),
        cost(model_cost(file)),
        backend(BackendRegistry::global().create(
            o.backend.empty() ? default_backend_name() : o.backend,
            BackendOptions{.threads = o.threads, .prepack_weights = o.repack_weights})),
        model(load_model(file, *backend)),
        rng(o.seed),
        kv_dtype(parse_kv_cache_dtype(o.kv_cache_dtype)) {}

  std::vector<int32_t> random_tokens(int32_t n) {
    std::uniform_int_distribution<int32_t> pick(0, model->config().n_vocab - 1);
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& t : tokens) t = pick(rng);
    return tokens;
  }

  // One timed run on a fresh sequence; returns tokens per second.
  double run_once(const PagedKvCache& cache, BenchKind kind, int32_t n_tokens) {
    SoloSequence sequence(*model, *backend, cache);
    double seconds = 0;
    if (kind == BenchKind::kPrompt) {
      const std::vector<int32_t> tokens = random_tokens(n_tokens);
      const Clock::time_point start = Clock::now();
      for (int32_t first = 0; first < n_tokens; first += kPrefillChunk) {
        const auto count = std::min(kPrefillChunk, n_tokens - first);
        sequence.step(std::span<const int32_t>(tokens).subspan(first, count), {count - 1});
      }
      seconds = seconds_since(start);
    } else {
      seconds = decode(sequence, n_tokens);
    }
    return n_tokens / seconds;
  }

  // Greedy decode steps from a 1-token context; returns the seconds the steps took.
  double decode(SoloSequence& sequence, int32_t n_tokens) {
    std::vector<float> logits = sequence.step(random_tokens(1), {0});
    const Clock::time_point start = Clock::now();
    for (int32_t i = 0; i < n_tokens; ++i) {
      const int32_t next = argmax(logits);
      logits = sequence.step(std::span(&next, 1), {0});
    }
    return seconds_since(start);
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

BenchResult Benchmark::run(BenchKind kind, int32_t n_tokens, int32_t repetitions,
                           const std::function<void()>& before_each) {
  if (n_tokens <= 0 || repetitions <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a benchmark needs positive token and repetition counts, got " +
                    std::to_string(n_tokens) + " tokens x " + std::to_string(repetitions));
  }
  const ModelConfig& c = impl_->model->config();
  const int32_t context = kind == BenchKind::kPrompt ? n_tokens : n_tokens + 1;
  const KvCacheShape shape{.n_layers = c.n_layer,
                           .n_kv_heads = c.n_head_kv,
                           .head_dim = c.head_dim,
                           .block_size = kKvBlockSize,
                           .n_blocks = (context + kKvBlockSize - 1) / kKvBlockSize,
                           .dtype = impl_->kv_dtype};
  PagedKvCache cache(shape, *impl_->backend);
  BenchResult result{.kind = kind,
                     .n_tokens = n_tokens,
                     .test = (kind == BenchKind::kPrompt ? "pp" : "tg") + std::to_string(n_tokens)};
  impl_->run_once(cache, kind, kind == BenchKind::kPrompt ? n_tokens : 1);
  for (int32_t i = 0; i < repetitions; ++i) {
    if (before_each) before_each();
    result.samples_tps.push_back(impl_->run_once(cache, kind, n_tokens));
  }
  summarize(result);
  return result;
}

}  // namespace baton
