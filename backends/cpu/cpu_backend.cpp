// CpuBackend: host memory, a per-op dtype table for supports(), and in-order execution of a
// graph's nodes with the configured OpenMP thread count.

#include "backends/cpu/cpu_backend.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <variant>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/host_buffer_pool.h"
#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/packed_weights.h"
#include "backends/cpu/matmul/panel_weights.h"
#include "backends/cpu/omp_team.h"
#include "baton/error.h"
#include "core/runtime/backend_registry.h"

namespace baton {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "unknown CPU";
}

size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page_size)
                                    : 0;
}

bool is_host(const Tensor& t) {
  return t.defined() && t.buffer()->is_host();
}
bool is_f32(const Tensor& t) {
  return t.dtype() == DType::kF32;
}
bool is_i32(const Tensor& t) {
  return t.dtype() == DType::kI32;
}
bool is_cache(const Tensor& t) {
  return is_kv_cache_dtype(t.dtype());
}

bool has_batch(const Node& node) {
  const auto* p = std::get_if<AttentionParams>(&node.params);
  return p && p->batch;
}

// Whether the node's inputs have the dtypes this backend's kernels take (inputs are host).
bool supports_dtypes(const Node& node) {
  if (!matches_schema(node)) return false;
  const std::vector<Tensor>& in = node.inputs;
  switch (node.op) {
    case OpKind::kEmbedding:
      return cpu::is_weight_dtype(in[0].dtype()) && is_i32(in[1]);
    case OpKind::kMatMul:
      return is_f32(in[0]) && cpu::is_weight_dtype(in[1].dtype());
    case OpKind::kRmsNorm:
      return is_f32(in[0]) && is_f32(in[1]);
    case OpKind::kRope:
      return is_f32(in[0]) && is_i32(in[1]);
    case OpKind::kKvWrite:
      return is_f32(in[0]) && is_f32(in[1]) && is_cache(in[2]) && in[3].dtype() == in[2].dtype() &&
             has_batch(node);
    case OpKind::kAttention:
      return is_f32(in[0]) && is_cache(in[1]) && in[2].dtype() == in[1].dtype() && has_batch(node);
    case OpKind::kSwiGlu:
    case OpKind::kGeGlu:
    case OpKind::kAdd:
      return is_f32(in[0]) && is_f32(in[1]);
    case OpKind::kScale:
    case OpKind::kSoftcap:
      return is_f32(in[0]);
    case OpKind::kSoftmax:
    case OpKind::kArgmax:
      return is_f32(in[0]) && in[0].row_length() > 0;
    case OpKind::kGetRows:
      return is_f32(in[0]) && is_i32(in[1]);
    case OpKind::kAllReduce: {
      const auto* collective = std::get_if<CollectiveParams>(&node.params);
      return is_f32(in[0]) && collective && collective->group;
    }
    case OpKind::kLora:
      return is_f32(in[0]) && is_f32(in[1]) && is_lora_slot_dtype(in[2].dtype()) &&
             in[3].dtype() == in[2].dtype() && is_i32(in[4]);
  }
  return false;
}

std::string describe_inputs(const Node& node) {
  std::string out;
  for (const Tensor& t : node.inputs) {
    out += (out.empty() ? "" : ", ") + std::string(to_string(t.dtype())) + " " +
           to_string(t.shape()) + (is_host(t) ? "" : " (not host memory)");
  }
  return out;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const BackendOptions& options) {
    if (options.threads < 0) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "cpu threads must be >= 0, got " + std::to_string(options.threads));
    }
    const int hardware = static_cast<int>(std::thread::hardware_concurrency());
    ctx_.threads = cpu::omp_team_threads(options.threads > 0 ? options.threads
                                                             : (hardware > 0 ? hardware : 1));
    if (options.prepack_weights) {
      // Copies of F16/BF16 weights (f32 ones are twice the file's bytes) within half the RAM.
      const size_t ram = physical_memory_bytes();
      packed_ = std::make_unique<cpu::PackedWeights>(ram > 0 ? ram / 2 : SIZE_MAX);
      ctx_.packed = packed_.get();
      panels_ = std::make_unique<cpu::PanelWeights>();
      ctx_.panels = panels_.get();
    }
  }

  std::string_view name() const override { return "cpu"; }
  int32_t host_threads() const override { return ctx_.threads; }

  std::vector<DeviceInfo> devices() const override {
    return {DeviceInfo{"cpu0", cpu_model_name() + ", " + std::to_string(ctx_.threads) + " threads",
                       physical_memory_bytes()}};
  }

  std::shared_ptr<Buffer> allocate(size_t bytes) override { return pool_.allocate(bytes); }

  // Host memory (a memory-mapped weight) is already ours: use it in place, never copy it. A 2-D
  // float weight also gets its GEMM-layout copy for prefill, made here once rather than per call.
  // (Q4_0 / Q8_0 weights get their panel layout at their first matmul, so that an embedding
  // table, which only the embedding reads, stays as mapped.)
  Tensor import_tensor(const Tensor& host) override {
    if (!is_host(host)) return Backend::import_tensor(host);
    if (packed_) packed_->add(host, ctx_.threads);
    return host;
  }

  bool supports(const Node& node) const override {
    for (const Tensor& t : node.inputs) {
      if (!is_host(t)) return false;
    }
    if (node.op != OpKind::kKvWrite && !is_host(node.output)) return false;
    return supports_dtypes(node);
  }

  void execute(const Graph& graph) override {
    for (const Node& node : graph.nodes()) {
      if (!supports(node)) {
        throw Error(ErrorCategory::kUnsupported,
                    "cpu backend, node '" + node.name + "' (" + std::string(to_string(node.op)) +
                        "): unsupported inputs " + describe_inputs(node));
      }
    }
    cpu::execute(ctx_, graph);
  }

  void upload(const Tensor& device_tensor, const void* host, size_t bytes) override {
    check_copy(device_tensor, bytes, "upload");
    // An empty std::vector's data() may be null, and memcpy from null is undefined even for 0
    // bytes.
    if (bytes == 0) return;
    std::memcpy(device_tensor.materialize(), host, bytes);
  }

  void download(void* host, const Tensor& device_tensor, size_t bytes) override {
    check_copy(device_tensor, bytes, "download");
    if (bytes == 0) return;
    std::memcpy(host, device_tensor.materialize(), bytes);
  }

 private:
  static void check_copy(const Tensor& t, size_t bytes, const char* what) {
    if (!is_host(t)) {
      throw Error(ErrorCategory::kInvalidArgument,
                  std::string("cpu ") + what + " needs a tensor in host memory");
    }
    if (bytes > t.nbytes()) {
      throw Error(ErrorCategory::kInvalidArgument,
                  std::string("cpu ") + what + " of " + std::to_string(bytes) +
                      " bytes exceeds the tensor's " + std::to_string(t.nbytes()));
    }
  }

  std::unique_ptr<cpu::PackedWeights> packed_;
  std::unique_ptr<cpu::PanelWeights> panels_;
  // A step's activations come back to the pool when its graph goes; the cap bounds what an
  // unusually large step leaves cached.
  cpu::HostBufferPool pool_{size_t{4} << 30};
  cpu::Context ctx_;
};

// Usable unless BATON_CPU_ISA asks for kernels this CPU cannot run; the detail names the
// kernel level in use.
BackendStatus probe_cpu() {
  try {
    return {true,
            cpu_model_name() + ", " + std::string(cpu::to_string(cpu::active_isa())) + " kernels"};
  } catch (const Error& e) {
    return {false, e.what()};
  }
}

BackendEntry make_cpu_backend_entry() {
  return BackendEntry{"cpu", "host CPU with OpenMP threads", probe_cpu, make_cpu_backend};
}

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace baton

BATON_REGISTER_BACKEND(cpu, baton::make_cpu_backend_entry())
