#pragma once

// The backend under test and moving tensors to and from it: the conformance suite of
// tests/backends/gpu runs against the backend named by $BATON_GPU_BACKEND ("cuda" when unset;
// "rocm", "gpusim", "gpusim64" and "cpu" run the same suite), made through the registry exactly
// as `--backend` makes it, so the plugin loader finds it. On a host without a usable device
// every test skips with the backend's own reason. Tests of BackendTest hold for every backend;
// those of GpuOnlyTest check what only a device-memory backend does (ctest leaves them out of
// the cpu run).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/runtime/backend_registry.h"
#include "core/runtime/graph.h"
#include "ops/reference.h"
#include "tests/ops/op_test_util.h"

namespace baton::testing {

inline std::string gpu_backend_name() {
  const char* env = std::getenv("BATON_GPU_BACKEND");
  return env && *env ? env : "cuda";
}

// The CPU backend multiplies Q8_0 / Q4_0 weights by x quantized to int8 per 32-element block, as
// llama.cpp does; GPU backends decode the weights and keep x in floating point.
inline bool backend_quantizes_activations() {
  return gpu_backend_name() == "cpu";
}

// The backend, or null with the reason it cannot be made here.
struct GpuBackend {
  std::unique_ptr<Backend> backend;
  std::string reason;
};

inline GpuBackend open_gpu_backend() {
  try {
    return {BackendRegistry::global().create(gpu_backend_name(), {}), ""};
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::kBackend) throw;
    return {nullptr, e.what()};
  }
}

// Host tensors copied to the backend, and back.
inline Tensor to_device(Backend& backend, const Tensor& host) {
  return backend.import_tensor(host);
}
inline Tensor to_host(Backend& backend, const Tensor& device) {
  Tensor host = Tensor::host(device.dtype(), device.shape());
  backend.download(host.materialize(), device, host.nbytes());
  return host;
}

// Expects |out - ref| <= u * sum_c |x_c * w_c| + (1e-5 * |ref| + 2e-7 * k) per element: each
// product's inputs rounded by at most u relative, then an fp32 sum (relative 1e-5, and an
// absolute k * 2e-7 for the fp32 accumulation of k terms of magnitude <= 1, as in the CPU
// tests). With `int8_x`, x was also quantized to int8 per 32-element block, which moves each
// x_c by at most half a step, max |x over its block| / 254, adding sum_c |w_c| times that. A
// decoding slip (a wrong nibble, scale or row) is off by 1e-2 or more and fails; with int8_x
// the bound is wider, and a slip confined to one block of a long row may pass, but a wrong row,
// nibble order or scale type does not.
inline void expect_matmul_close(const Tensor& out, const Tensor& ref, const Tensor& x,
                                const Tensor& w, double u, bool int8_x = false) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  std::vector<float> row(static_cast<size_t>(k));
  int reported = 0;
  for (int64_t j = 0; j < m; ++j) {
    reference::dequantize_row(w, j, row.data());
    for (int64_t i = 0; i < n; ++i) {
      const float* xi = x.data<float>() + i * k;
      double magnitude = 0.0, quantization = 0.0;
      for (int64_t c = 0; c < k; ++c) magnitude += std::abs(xi[c] * row[c]);
      for (int64_t b = 0; int8_x && b < k; b += 32) {
        double block_max = 0.0, block_weight = 0.0;
        for (int64_t c = b; c < std::min(k, b + 32); ++c) {
          block_max = std::max(block_max, static_cast<double>(std::abs(xi[c])));
          block_weight += std::abs(row[c]);
        }
        quantization += block_weight * block_max / 254.0;
      }
      const double e = ref.data<float>()[i * m + j], a = out.data<float>()[i * m + j];
      const double bound =
          u * magnitude + quantization + 1e-5 * std::abs(e) + 2e-7 * static_cast<double>(k);
      if (std::abs(a - e) <= bound) continue;
      ADD_FAILURE() << "out[" << i << ", " << j << "] = " << a << ", expected " << e << " (diff "
                    << std::abs(a - e) << " > bound " << bound << ")";
      if (++reported == 5) return;
    }
  }
}

inline Graph graph_on(Backend& backend) {
  return Graph([&backend](DType dtype, Shape shape) {
    return backend.allocate_tensor(dtype, std::move(shape));
  });
}

// Fixture whose tests run on the GPU backend; SetUp skips when it is not usable.
class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GpuBackend opened = open_gpu_backend();
    if (!opened.backend) {
      GTEST_SKIP() << "GPU backend '" << gpu_backend_name()
                   << "' is not usable here, skipping: " << opened.reason;
    }
    backend_ = std::move(opened.backend);
  }

  Backend& backend() { return *backend_; }
  Tensor device(const Tensor& host) { return to_device(*backend_, host); }
  Tensor host(const Tensor& device) { return to_host(*backend_, device); }
  // Runs the nodes build(graph) appends and returns the tensor it names, downloaded.
  template <typename Build>
  Tensor run(Build build) {
    Graph graph = graph_on(*backend_);
    const Tensor out = build(graph);
    backend_->execute(graph);
    return host(out);
  }

 private:
  std::unique_ptr<Backend> backend_;
};

// Tests of what only a backend with its own device memory does (copies, device-side errors,
// kernel limits, GEMM choice). ctest leaves them out of the cpu run; run by hand there, they
// skip.
class GpuOnlyTest : public BackendTest {
 protected:
  void SetUp() override {
    if (gpu_backend_name() == "cpu") GTEST_SKIP() << "a GPU-only test; the backend is cpu";
    BackendTest::SetUp();
  }
};

// Parameterised tests take the same fixture.
template <typename Param>
class BackendParamTest : public BackendTest, public ::testing::WithParamInterface<Param> {};

}  // namespace baton::testing
