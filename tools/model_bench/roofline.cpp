#include "tools/model_bench/roofline.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/runtime/backend_registry.h"
#include "core/runtime/graph.h"
#include "core/runtime/quantize/quantize.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Eight independent integer sums: no dependency chain or float reassociation limits the loads,
// and the compiler vectorizes them at any ISA level.
uint64_t sum_words(const uint64_t* p, size_t n) {
  uint64_t acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += p[i + j];
  }
  for (; i < n; ++i) acc[0] += p[i];
  uint64_t total = 0;
  for (uint64_t a : acc) total += a;
  return total;
}

void check_positive(const char* what, int64_t value) {
  if (value <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                std::string(what) + " must be positive, got " + std::to_string(value));
  }
}

}  // namespace

ReadBandwidthProbe::ReadBandwidthProbe(uint64_t bytes, int32_t threads)
    : threads_(threads > 0 ? threads : omp_get_max_threads()) {
  const size_t words = bytes / sizeof(uint64_t);
  check_positive("bandwidth buffer size in 8-byte words", static_cast<int64_t>(words));
  buffer_.resize(words);
#pragma omp parallel for num_threads(threads_) schedule(static)
  for (size_t i = 0; i < words; ++i) buffer_[i] = i;  // touch every page before timing
}

double ReadBandwidthProbe::measure(int32_t runs) const {
  check_positive("runs", runs);
  const size_t words = buffer_.size();
  double best = 0;
  volatile uint64_t sink = 0;  // keeps the sums from being optimized away
  for (int32_t r = 0; r < runs; ++r) {
    uint64_t total = 0;
    const Clock::time_point start = Clock::now();
#pragma omp parallel num_threads(threads_) reduction(+ : total)
    {
      const size_t chunk = (words + omp_get_num_threads() - 1) / omp_get_num_threads();
      const size_t first = std::min(words, chunk * omp_get_thread_num());
      total += sum_words(buffer_.data() + first, std::min(chunk, words - first));
    }
    best = std::max(best, static_cast<double>(words * sizeof(uint64_t)) / seconds_since(start));
    sink = sink + total;
  }
  return best;
}

double measure_matmul_flops(const std::string& backend_name, int32_t threads, DType weight_type,
                            int64_t m, int64_t n, int64_t k, int32_t runs) {
  check_positive("m", m);
  check_positive("n", n);
  check_positive("k", k);
  check_positive("runs", runs);
  std::unique_ptr<Backend> backend =
      BackendRegistry::global().create(backend_name.empty() ? default_backend_name() : backend_name,
                                       BackendOptions{.threads = threads});
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> row(static_cast<size_t>(k));
  Tensor weight = Tensor::host(weight_type, {n, k});
  for (int64_t r = 0; r < n; ++r) {
    for (float& v : row) v = normal(rng);
    quantize_row(weight_type, row.data(), weight.materialize() + weight.row_bytes() * r, k);
  }
  std::vector<float> activations(static_cast<size_t>(m * k));
  for (float& v : activations) v = normal(rng);
  Tensor x = backend->allocate_tensor(DType::kF32, {m, k});
  backend->upload(x, activations.data(), activations.size() * sizeof(float));
  const Tensor w = backend->import_tensor(weight);

  Graph graph(
      [&](DType dtype, Shape shape) { return backend->allocate_tensor(dtype, std::move(shape)); });
  graph.matmul(x, w, "roofline_matmul");
  backend->execute(graph);  // warm-up: first-touch of the output, any lazy weight packing
  double best = 0;
  for (int32_t r = 0; r < runs; ++r) {
    const Clock::time_point start = Clock::now();
    backend->execute(graph);
    best = std::max(best, 2.0 * m * n * k / seconds_since(start));
  }
  return best;
}

double roofline_fraction(const BenchResult& result, const ModelCost& cost,
                         const Roofline& roofline) {
  if (result.kind == BenchKind::kGeneration) {
    const auto bytes = static_cast<double>(cost.decode_bytes);
    const std::vector<double>& bandwidth = result.read_bytes_per_second;
    if (!bandwidth.empty()) {
      if (bandwidth.size() != result.samples_tps.size()) {
        throw Error(ErrorCategory::kInvalidArgument,
                    result.test + ": " + std::to_string(bandwidth.size()) +
                        " bandwidth figures for " + std::to_string(result.samples_tps.size()) +
                        " runs");
      }
      std::vector<double> fractions;
      for (size_t i = 0; i < bandwidth.size(); ++i) {
        fractions.push_back(bandwidth[i] > 0 ? result.samples_tps[i] * bytes / bandwidth[i] : 0);
      }
      return median(fractions);
    }
    if (roofline.read_bytes_per_second <= 0) return 0;
    return result.median_tps * bytes / roofline.read_bytes_per_second;
  }
  const auto peak = roofline.matmul_flops.find(cost.weight_type);
  if (peak == roofline.matmul_flops.end() || peak->second <= 0) return 0;
  return result.median_tps * 2.0 * static_cast<double>(cost.prefill_params) / peak->second;
}

double read_bandwidth_for(const BenchResult& result, const Roofline& roofline) {
  if (result.read_bytes_per_second.empty()) return roofline.read_bytes_per_second;
  return median(result.read_bytes_per_second);
}

}  // namespace baton
