#pragma once

// The machine's roofline (read bandwidth, matmul peak per weight dtype) and benchmark results
// as fractions of it.

#include <cstdint>
#include <map>
#include <string>

#include "core/dtype.h"
#include "core/llm/benchmark.h"

namespace baton {

struct Roofline {
  double read_bytes_per_second = 0;
  std::map<DType, double> matmul_flops;  // per weight dtype, FLOP/s
};

// Multithreaded streaming reduction over `bytes` of memory; the best of `runs`, in bytes/s.
double measure_read_bandwidth(uint64_t bytes, int32_t threads, int32_t runs);

// The backend's matmul of f32 activations [m, k] by `weight_type` weights [n, k] (imported as a
// model's weights are); the best of `runs` after a warm-up, in FLOP/s (2·m·n·k per run).
double measure_matmul_flops(const std::string& backend, int32_t threads, DType weight_type,
                            int64_t m, int64_t n, int64_t k, int32_t runs);

// The result as a fraction of what the roofline allows: tg against read bandwidth over
// decode_bytes, pp against the matmul peak for the model's weight type over 2·prefill_params.
// 0 when the roofline lacks the figure.
double roofline_fraction(const BenchResult& result, const ModelCost& cost,
                         const Roofline& roofline);

}  // namespace baton
