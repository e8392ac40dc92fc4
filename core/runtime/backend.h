#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/graph.h"
#include "core/runtime/tensor.h"

namespace baton {

struct DeviceInfo {
  std::string name;         // "cpu0", "cuda:0"
  std::string description;  // model name, ISA, core count
  size_t memory_bytes = 0;  // 0 when unknown
};

// Whether a backend can run on this host, and if not, why (for `baton backends` and errors).
struct BackendStatus {
  bool usable = false;
  std::string detail;
};

struct BackendOptions {
  int threads = 0;  // CPU worker threads; 0 picks the machine's core count
  // CPU: repack weights for faster kernels. Q4_0/Q8_0 weights move into the panel kernel's
  // layout at their first matmul (the mapped pages are given back, so they are still held
  // once); each imported 2-D float weight also gets a second copy in oneDNN's GEMM layout, which
  // makes prefill several times faster (F16 weights are kept as bf16 there). False: every
  // weight is used in place, as loaded.
  bool prepack_weights = true;
};

// One device family. Backends allocate device memory for tensors, say which nodes they can
// run, and execute a graph's nodes in order. Implementations: backends/cpu, and plugins.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  // Host threads a step keeps busy: other host work runs beside a step only where cores are left.
  virtual int32_t host_threads() const { return 1; }
  virtual std::vector<DeviceInfo> devices() const = 0;

  // Device memory for `bytes`. A backend may take it at the buffer's first data() (the CPU
  // backend's pool does), so an allocation too large for the device can fail there; callers
  // that want the failure up front touch data() once.
  virtual std::shared_ptr<Buffer> allocate(size_t bytes) = 0;
  Tensor allocate_tensor(DType dtype, Shape shape);

  // Whether execute() can run this node (its op and the dtypes of its inputs).
  virtual bool supports(const Node& node) const = 0;
  // Runs every node in order; throws Error naming the first node it cannot run. When the graph
  // declares its outputs, the other node outputs may be discarded once their readers have run.
  virtual void execute(const Graph& graph) = 0;

  // Makes a host tensor (a memory-mapped weight) usable by this backend. The default copies it
  // into device memory; host backends return it unchanged so weights are never held twice.
  virtual Tensor import_tensor(const Tensor& host);

  // Prepares collectives over `group`, a tensor-parallel group whose all_reduce nodes this
  // backend will run, before any step; every rank of the group calls it at the same point. A
  // backend with a device collective library (NCCL) sets up its communicator here. The default
  // does nothing: all_reduce nodes then go through `group` itself, from host memory.
  virtual void join_group(Communicator& group) {}

  // Copies between host memory and a tensor of this backend (plain memcpy on host backends).
  virtual void upload(const Tensor& device_tensor, const void* host, size_t bytes) = 0;
  virtual void download(void* host, const Tensor& device_tensor, size_t bytes) = 0;
};

}  // namespace baton
