#pragma once

// Runs graphs on fresh CPU backends with one and with two threads. Every kernel computes each
// output element on one thread with the same instruction sequence, so the two runs must agree
// bit for bit; run_cpu checks that before returning.

#include <gtest/gtest.h>
#include <omp.h>

#include <functional>

#include "backends/cpu/cpu_backend.h"
#include "core/runtime/graph.h"
#include "tests/ops/op_test_util.h"

namespace baton::testing {

inline Graph graph_on(Backend& backend) {
  return Graph([&backend](DType dtype, Shape shape) {
    return backend.allocate_tensor(dtype, std::move(shape));
  });
}

// build(graph) appends the nodes under test and returns the tensor to compare; it is called
// once per thread count, so it must not share tensors that the graph writes (KV caches).
// Without prepacking, quantized weights are read in the file's layout by the kernels that also
// serve backends with prepacking off.
inline Tensor run_cpu(const std::function<Tensor(Graph&)>& build, bool prepack_weights = true) {
  Tensor outputs[2];
  for (int threads : {1, 2}) {
    std::unique_ptr<Backend> backend =
        make_cpu_backend({.threads = threads, .prepack_weights = prepack_weights});
    Graph graph = graph_on(*backend);
    outputs[threads - 1] = build(graph);
    backend->execute(graph);
  }
  expect_identical(outputs[0], outputs[1]);
  return outputs[0];
}

// Runs `body` on a lone thread of a parallel region nested inside another, with nesting off, so
// that a kernel asking for several threads gets a team of one; returns the nested team's size,
// which the caller asserts is 1.
inline int run_in_lone_nested_thread(const std::function<void()>& body) {
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(1);
  int team = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    {
      body();
#pragma omp parallel num_threads(4)
      team = omp_get_num_threads();
    }
  }
  omp_set_max_active_levels(levels);
  return team;
}

}  // namespace baton::testing
