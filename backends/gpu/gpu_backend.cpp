// GpuBackend: memory, copies and graph execution on one GPU and one stream.

#include "backends/gpu/gpu_backend.h"

#include <cstdlib>
#include <string>

#include "backends/gpu/gpu_context.h"
#include "backends/gpu/pinned_staging.h"
#include "backends/gpu/step_metadata.h"
#include "baton/error.h"
#include "core/runtime/comm/world.h"

namespace baton::gpu {
namespace {

std::string node_label(const Node& node) {
  return "node '" + node.name + "' (" + std::string(to_string(node.op)) + ")";
}

// The backend's stream. It is declared before the members that queue work on it, so it is
// destroyed after them, and the backend waits for it before any of them goes.
struct Stream {
  Stream() { GPU_CHECK(gpuStreamCreateWithFlags(&handle, gpuStreamNonBlocking)); }
  ~Stream() { GPU_IGNORE(gpuStreamDestroy(handle)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  gpuStream_t handle = nullptr;
};

// Device 0 in a single process; one device per rank on a host with several, as NCCL requires
// (it refuses two ranks of one communicator on one GPU).
int open_device() {
  int count = 0;
  GPU_CHECK(gpuGetDeviceCount(&count));
  const int device = count > 0 ? launched_local_rank() % count : 0;
  GPU_CHECK(gpuSetDevice(device));
  return device;
}

gpuDeviceProp_t properties(int device) {
  gpuDeviceProp_t props{};
  GPU_CHECK(gpuGetDeviceProperties(&props, device));
  return props;
}

// The spec's device collectives, unless BATON_GPU_COLLECTIVES=host asks for host staging.
std::unique_ptr<DeviceCollectives> make_collectives(const GpuBackendSpec& spec) {
  const char* env = std::getenv("BATON_GPU_COLLECTIVES");
  if (env != nullptr && *env != '\0') {
    if (std::string_view(env) == "host") return nullptr;
    throw Error(ErrorCategory::kInvalidArgument, std::string("BATON_GPU_COLLECTIVES='") + env +
                                                     "' is not 'host' (unset it for the " +
                                                     spec.name + " backend's own collectives)");
  }
  return spec.make_collectives ? spec.make_collectives() : nullptr;
}

// The GEMM BATON_GPU_GEMM asks for: the spec's when unset, the tiled kernel for "tiled".
std::unique_ptr<Gemm> make_gemm(const GpuBackendSpec& spec, gpuStream_t stream,
                                std::shared_ptr<DeviceAllocator> allocator) {
  const char* env = std::getenv("BATON_GPU_GEMM");
  if (env == nullptr || *env == '\0') return spec.make_gemm(stream, std::move(allocator));
  if (std::string_view(env) == "tiled") return make_tiled_gemm(stream);
  throw Error(ErrorCategory::kInvalidArgument, std::string("BATON_GPU_GEMM='") + env +
                                                   "' is not 'tiled' (unset it for the " +
                                                   spec.name + " backend's own GEMM)");
}

class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(const GpuBackendSpec& spec)
      : name_(spec.name),
        description_(spec.describe(props_)),
        allocator_(DeviceAllocator::create(name_)),
        gemm_(make_gemm(spec, stream_.handle, allocator_)),
        collectives_(make_collectives(spec)),
        error_slot_(allocator_->allocate(kErrorSlotBytes)) {
    GPU_CHECK(gpuMemsetAsync(error_slot_->data(), 0, kErrorSlotBytes, stream_.handle));
  }

  ~GpuBackend() override {
    // Errors are ignored: nothing can be reported from a destructor. Buffers handed out keep
    // the allocator (and their memory) until they go.
    GPU_IGNORE(gpuStreamSynchronize(stream_.handle));
  }

  std::string_view name() const override { return name_; }

  std::vector<DeviceInfo> devices() const override {
    return {DeviceInfo{name_ + ":" + std::to_string(device_), description_, props_.totalGlobalMem}};
  }

  // Zero-filled, as host backends' memory is: a KV cache starts as zeros on every backend.
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    use_device();
    std::shared_ptr<Buffer> buffer = allocator_->allocate(bytes);
    if (bytes > 0) GPU_CHECK(gpuMemsetAsync(buffer->data(), 0, bytes, stream_.handle));
    return buffer;
  }

  bool supports(const Node& node) const override { return supports_node(node, name_); }

  void execute(const Graph& graph) override {
    const std::vector<Node>& nodes = graph.nodes();
    for (const Node& node : nodes) {
      if (!supports(node)) {
        throw Error(ErrorCategory::kUnsupported, name_ + " backend, " + node_label(node) +
                                                     ": unsupported inputs " +
                                                     describe_inputs(node, name_));
      }
    }
    use_device();
    try {
      const StepMetadata meta(nodes, *allocator_, staging_, stream_.handle);
      const Context ctx{stream_.handle, *gemm_, *allocator_,
                        reinterpret_cast<int32_t*>(error_slot_->data()), collectives_.get()};
      run_nodes(ctx, nodes, meta);
      check_index_errors(nodes);
    } catch (const Error& e) {
      throw Error(e.category(), name_ + " backend, " + e.what());
    }
  }

  void join_group(Communicator& group) override {
    use_device();
    if (collectives_) collectives_->join(group);
  }

  Tensor import_tensor(const Tensor& host) override {
    if (host.defined() && host.buffer()->device() == name_) return host;
    return Backend::import_tensor(host);
  }

  void upload(const Tensor& device_tensor, const void* host, size_t bytes) override {
    check_copy(device_tensor, bytes, "upload");
    use_device();
    GPU_CHECK(gpuMemcpyAsync(device_tensor.materialize(), host, bytes, gpuMemcpyHostToDevice,
                             stream_.handle));
    GPU_CHECK(gpuStreamSynchronize(stream_.handle));  // the caller may reuse `host` on return
  }

  void download(void* host, const Tensor& device_tensor, size_t bytes) override {
    check_copy(device_tensor, bytes, "download");
    use_device();
    GPU_CHECK(gpuMemcpyAsync(host, device_tensor.materialize(), bytes, gpuMemcpyDeviceToHost,
                             stream_.handle));
    GPU_CHECK(gpuStreamSynchronize(stream_.handle));
  }

 private:
  static constexpr size_t kErrorSlotBytes = 3 * sizeof(int32_t);

  // The current device is per host thread, and the engine steps (and builds its KV cache) on a
  // thread of its own, not the one that made the backend: each entry point that reaches the
  // device selects it first.
  void use_device() const { GPU_CHECK(gpuSetDevice(device_)); }

  void check_copy(const Tensor& t, size_t bytes, const char* what) const {
    if (!t.defined() || t.buffer()->device() != name_) {
      throw Error(ErrorCategory::kInvalidArgument,
                  name_ + " " + what + " needs a tensor in " + name_ + " memory");
    }
    if (bytes > t.nbytes()) {
      throw Error(ErrorCategory::kInvalidArgument,
                  name_ + " " + what + " of " + std::to_string(bytes) +
                      " bytes exceeds the tensor's " + std::to_string(t.nbytes()));
    }
  }

  // Gathers (embedding, get_rows) and the LoRA update report a bad index (a LoRA slot) on the
  // device rather than read out of bounds; reading the report waits for the step, which the
  // caller's download of the step's result does anyway.
  void check_index_errors(const std::vector<Node>& nodes) {
    bool gathers = false;
    for (const Node& node : nodes) {
      gathers |=
          node.op == OpKind::kEmbedding || node.op == OpKind::kGetRows || node.op == OpKind::kLora;
    }
    if (!gathers) return;
    int32_t slot[3] = {};
    GPU_CHECK(gpuMemcpyAsync(slot, error_slot_->data(), sizeof(slot), gpuMemcpyDeviceToHost,
                             stream_.handle));
    GPU_CHECK(gpuStreamSynchronize(stream_.handle));
    if (slot[0] == 0) return;
    GPU_CHECK(gpuMemsetAsync(error_slot_->data(), 0, kErrorSlotBytes, stream_.handle));
    const Node& node = nodes.at(static_cast<size_t>(slot[0] - 1));
    if (node.op == OpKind::kLora) {
      throw Error(ErrorCategory::kInvalidArgument,
                  node_label(node) + ": lora slot " + std::to_string(slot[1]) + " of token " +
                      std::to_string(slot[2]) + " is outside the " +
                      std::to_string(node.inputs[2].dim(0)) + " slots");
    }
    const bool embedding = node.op == OpKind::kEmbedding;
    throw Error(ErrorCategory::kInvalidArgument,
                node_label(node) + ": " + (embedding ? "embedding id " : "get_rows row ") +
                    std::to_string(slot[1]) + " at index " + std::to_string(slot[2]) +
                    " is outside the " + (embedding ? "table's " : "x's ") +
                    std::to_string(node.inputs[0].dim(0)) + " rows");
  }

  // Declaration order is construction order: the device is chosen before anything uses it.
  const int device_ = open_device();
  const gpuDeviceProp_t props_ = properties(device_);
  Stream stream_;
  const std::string name_;
  const std::string description_;
  std::shared_ptr<DeviceAllocator> allocator_;
  std::unique_ptr<Gemm> gemm_;
  std::unique_ptr<DeviceCollectives> collectives_;
  std::shared_ptr<Buffer> error_slot_;
  PinnedStaging staging_;
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(const GpuBackendSpec& spec) {
  return std::make_unique<GpuBackend>(spec);
}

}  // namespace baton::gpu
