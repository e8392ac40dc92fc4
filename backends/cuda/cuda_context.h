#pragma once

// What the CUDA backend's node runners share: the stream every kernel, copy and cuBLAS call
// is queued on, the cuBLAS handle bound to it, the device allocator for scratch memory, and the
// device slot where gather kernels report an out-of-range index.

#include <cublas_v2.h>

#include <span>
#include <string>

#include "backends/gpu/device_allocator.h"
#include "backends/gpu/gpu_runtime.h"
#include "backends/gpu/step_metadata.h"
#include "core/graph.h"

namespace baton::cuda {

struct Context {
  gpuStream_t stream;
  cublasHandle_t cublas;
  gpu::DeviceAllocator& allocator;
  int32_t* error_slot;  // device int32[3], see gpu::IndexError
};

// Throws Error(kBackend) naming the cuBLAS call and status unless it succeeded.
void check_cublas(cublasStatus_t status, const char* call);
#define CUBLAS_CHECK(call) ::baton::cuda::check_cublas((call), #call)

// Whether run_nodes can run `node`: its op, its inputs' dtypes and ranks, and every tensor in
// this backend's memory (`device` is the buffers' device name).
bool supports_node(const Node& node, std::string_view device);
// "f32 [3, 4], q8_0 [8, 4] (not cuda memory)": for the unsupported-node error.
std::string describe_inputs(const Node& node, std::string_view device);

// Queues every node's kernels on ctx.stream in order. Nodes must be supported; `meta` holds
// their device-side parameters. Throws Error naming the node that failed.
void run_nodes(const Context& ctx, std::span<const Node> nodes, const gpu::StepMetadata& meta);

// out[n, m] = x[n, k] * w[m, k]^T for every weight dtype (cuda_matmul.cpp).
void matmul(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);

}  // namespace baton::cuda
