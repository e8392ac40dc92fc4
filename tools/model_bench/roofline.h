#pragma once

// The machine's roofline (read bandwidth, matmul peak per weight dtype) and benchmark results
// as fractions of it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/runtime/dtype.h"
#include "tools/model_bench/benchmark.h"

namespace baton {

struct Roofline {
  double read_bytes_per_second = 0;
  std::map<DType, double> matmul_flops;  // per weight dtype, FLOP/s
};

// A resident buffer for measuring read bandwidth as often as needed: a benchmark on a shared
// host measures it right before each timed run, as the bandwidth there drifts by tens of
// percent from minute to minute, and pays for the allocation and page faults once.
class ReadBandwidthProbe {
 public:
  ReadBandwidthProbe(uint64_t bytes, int32_t threads);
  uint64_t bytes() const { return buffer_.size() * sizeof(uint64_t); }
  // Multithreaded streaming reduction over the buffer; the best of `runs`, in bytes/s.
  double measure(int32_t runs) const;

 private:
  std::vector<uint64_t> buffer_;
  int threads_;
};

// The backend's matmul of f32 activations [m, k] by `weight_type` weights [n, k] (imported as a
// model's weights are); the best of `runs` after a warm-up, in FLOP/s (2·m·n·k per run).
double measure_matmul_flops(const std::string& backend, int32_t threads, DType weight_type,
                            int64_t m, int64_t n, int64_t k, int32_t runs);

// The result as a fraction of what the roofline allows: tg against read bandwidth over
// decode_bytes, pp against the matmul peak for the model's weight type over 2·prefill_params.
// A tg result that carries its own bandwidth measurements is the median of each repetition
// against the bandwidth measured just before it. 0 when the roofline lacks the figure.
double roofline_fraction(const BenchResult& result, const ModelCost& cost,
                         const Roofline& roofline);

// The read bandwidth a tg result is held against: the median of its own measurements, else
// the roofline's.
double read_bandwidth_for(const BenchResult& result, const Roofline& roofline);

}  // namespace baton
