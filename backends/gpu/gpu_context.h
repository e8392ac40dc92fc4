#pragma once

// What a GPU backend's node runners share: the stream every kernel and copy is queued on, the
// GEMM for products of many rows, the device allocator for scratch memory, and the device slot
// where gather kernels report an out-of-range index. The runners are the same for every GPU
// vendor; gpu_runtime.h picks the runtime they are compiled for.

#include <span>
#include <string>

#include "backends/gpu/device_allocator.h"
#include "backends/gpu/device_collectives.h"
#include "backends/gpu/gemm.h"
#include "backends/gpu/gpu_runtime.h"
#include "backends/gpu/step_metadata.h"
#include "core/runtime/graph.h"

namespace baton::gpu {

struct Context {
  gpuStream_t stream;
  Gemm& gemm;
  DeviceAllocator& allocator;
  int32_t* error_slot;             // device int32[3], see IndexError
  DeviceCollectives* collectives;  // null: all-reduces are staged through the host
};

// Whether run_nodes can run `node`: its op, its inputs' dtypes and ranks, and every tensor in
// this backend's memory (`device` is the buffers' device name).
bool supports_node(const Node& node, std::string_view device);
// "f32 [3, 4], q8_0 [8, 4] (not cuda memory)": for the unsupported-node error.
std::string describe_inputs(const Node& node, std::string_view device);

// The kernels' name for a weight dtype that supports_node() accepted.
WeightType weight_type(DType dtype);

// Queues every node's kernels on ctx.stream in order. Nodes must be supported; `meta` holds
// their device-side parameters. Throws Error naming the node that failed.
void run_nodes(const Context& ctx, std::span<const Node> nodes, const StepMetadata& meta);

}  // namespace baton::gpu
