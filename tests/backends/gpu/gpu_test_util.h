#pragma once

// The GPU backend under test and moving tensors to and from it. The backend is the one named
// by $BATON_GPU_BACKEND ("cuda" when unset; "rocm" runs the same suite on a ROCm build), made
// through the registry exactly as `--backend` makes it, so the plugin loader finds it. On a
// host without a usable device every test skips with the backend's own reason.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/backend_registry.h"
#include "core/graph.h"
#include "ops/reference.h"
#include "tests/ops/op_test_util.h"

namespace baton::testing {

inline std::string gpu_backend_name() {
  const char* env = std::getenv("BATON_GPU_BACKEND");
  return env && *env ? env : "cuda";
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
// tests). A decoding slip (a wrong nibble, scale or row) is off by 1e-2 or more and fails.
inline void expect_matmul_close(const Tensor& out, const Tensor& ref, const Tensor& x,
                                const Tensor& w, double u) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  std::vector<float> row(static_cast<size_t>(k));
  int reported = 0;
  for (int64_t j = 0; j < m; ++j) {
    reference::dequantize_row(w, j, row.data());
    for (int64_t i = 0; i < n; ++i) {
      double magnitude = 0.0;
      for (int64_t c = 0; c < k; ++c) magnitude += std::abs(x.data<float>()[i * k + c] * row[c]);
      const double e = ref.data<float>()[i * m + j], a = out.data<float>()[i * m + j];
      const double bound = u * magnitude + 1e-5 * std::abs(e) + 2e-7 * static_cast<double>(k);
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
class GpuTest : public ::testing::Test {
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

// Parameterised tests take the same fixture.
template <typename Param>
class GpuParamTest : public GpuTest, public ::testing::WithParamInterface<Param> {};

}  // namespace baton::testing
