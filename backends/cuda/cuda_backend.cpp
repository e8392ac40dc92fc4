// CudaBackend: memory, copies and graph execution on one CUDA device and one stream.

#include "backends/cuda/cuda_backend.h"

#include <string>

#include "backends/cuda/cuda_context.h"
#include "backends/gpu/device_allocator.h"
#include "backends/gpu/gpu_runtime.h"
#include "backends/gpu/pinned_staging.h"
#include "backends/gpu/step_metadata.h"
#include "baton/error.h"

namespace baton::cuda {
namespace {

constexpr std::string_view kDevice = "cuda";

std::string node_label(const Node& node) {
  return "node '" + node.name + "' (" + std::string(to_string(node.op)) + ")";
}

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    GPU_CHECK(gpuSetDevice(0));
    GPU_CHECK(gpuGetDeviceProperties(&props_, 0));
    GPU_CHECK(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    // The default math mode: f32 GEMMs stay in fp32 (no TF32), 16-bit ones accumulate in fp32.
    CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
    allocator_ = gpu::DeviceAllocator::create(std::string(kDevice));
    error_slot_ = allocator_->allocate(kErrorSlotBytes);
    GPU_CHECK(gpuMemsetAsync(error_slot_->data(), 0, kErrorSlotBytes, stream_));
  }

  ~CudaBackend() override {
    // Errors are ignored: nothing can be reported from a destructor. Buffers handed out keep
    // the allocator (and their memory) until they go.
    (void)gpuStreamSynchronize(stream_);
    (void)cublasDestroy(cublas_);
    (void)gpuStreamDestroy(stream_);
  }

  std::string_view name() const override { return kDevice; }

  std::vector<DeviceInfo> devices() const override {
    return {DeviceInfo{"cuda:0",
                       std::string(props_.name) + ", compute capability " +
                           std::to_string(props_.major) + "." + std::to_string(props_.minor) +
                           ", " + std::to_string(props_.multiProcessorCount) + " SMs",
                       props_.totalGlobalMem}};
  }

  // Zero-filled, as host backends' memory is: a KV cache starts as zeros on every backend.
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    std::shared_ptr<Buffer> buffer = allocator_->allocate(bytes);
    if (bytes > 0) GPU_CHECK(gpuMemsetAsync(buffer->data(), 0, bytes, stream_));
    return buffer;
  }

  bool supports(const Node& node) const override { return supports_node(node, kDevice); }

  void execute(const Graph& graph) override {
    const std::vector<Node>& nodes = graph.nodes();
    for (const Node& node : nodes) {
      if (!supports(node)) {
        throw Error(ErrorCategory::kUnsupported, "cuda backend, " + node_label(node) +
                                                     ": unsupported inputs " +
                                                     describe_inputs(node, kDevice));
      }
    }
    try {
      const gpu::StepMetadata meta(nodes, *allocator_, staging_, stream_);
      const Context ctx{stream_, cublas_, *allocator_,
                        reinterpret_cast<int32_t*>(error_slot_->data())};
      run_nodes(ctx, nodes, meta);
      check_index_errors(nodes);
    } catch (const Error& e) {
      throw Error(e.category(), std::string("cuda backend, ") + e.what());
    }
  }

  Tensor import_tensor(const Tensor& host) override {
    if (host.defined() && host.buffer()->device() == kDevice) return host;
    return Backend::import_tensor(host);
  }

  void upload(const Tensor& device_tensor, const void* host, size_t bytes) override {
    check_copy(device_tensor, bytes, "upload");
    GPU_CHECK(gpuMemcpyAsync(device_tensor.raw(), host, bytes, gpuMemcpyHostToDevice, stream_));
    GPU_CHECK(gpuStreamSynchronize(stream_));  // the caller may reuse `host` on return
  }

  void download(void* host, const Tensor& device_tensor, size_t bytes) override {
    check_copy(device_tensor, bytes, "download");
    GPU_CHECK(gpuMemcpyAsync(host, device_tensor.raw(), bytes, gpuMemcpyDeviceToHost, stream_));
    GPU_CHECK(gpuStreamSynchronize(stream_));
  }

 private:
  static constexpr size_t kErrorSlotBytes = 3 * sizeof(int32_t);

  static void check_copy(const Tensor& t, size_t bytes, const char* what) {
    if (!t.defined() || t.buffer()->device() != kDevice) {
      throw Error(ErrorCategory::kInvalidArgument,
                  std::string("cuda ") + what + " needs a tensor in cuda memory");
    }
    if (bytes > t.nbytes()) {
      throw Error(ErrorCategory::kInvalidArgument,
                  std::string("cuda ") + what + " of " + std::to_string(bytes) +
                      " bytes exceeds the tensor's " + std::to_string(t.nbytes()));
    }
  }

  // Gathers (embedding, get_rows) report a bad index on the device rather than read out of
  // bounds; reading the report waits for the step, which the caller's download of the step's
  // result does anyway.
  void check_index_errors(const std::vector<Node>& nodes) {
    bool gathers = false;
    for (const Node& node : nodes) {
      gathers |= node.op == OpKind::kEmbedding || node.op == OpKind::kGetRows;
    }
    if (!gathers) return;
    int32_t slot[3] = {};
    GPU_CHECK(
        gpuMemcpyAsync(slot, error_slot_->data(), sizeof(slot), gpuMemcpyDeviceToHost, stream_));
    GPU_CHECK(gpuStreamSynchronize(stream_));
    if (slot[0] == 0) return;
    GPU_CHECK(gpuMemsetAsync(error_slot_->data(), 0, kErrorSlotBytes, stream_));
    const Node& node = nodes.at(static_cast<size_t>(slot[0] - 1));
    const bool embedding = node.op == OpKind::kEmbedding;
    throw Error(ErrorCategory::kInvalidArgument,
                node_label(node) + ": " + (embedding ? "embedding id " : "get_rows row ") +
                    std::to_string(slot[1]) + " at index " + std::to_string(slot[2]) +
                    " is outside the " + (embedding ? "table's " : "x's ") +
                    std::to_string(node.inputs[0].dim(0)) + " rows");
  }

  gpuDeviceProp_t props_{};
  gpuStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::shared_ptr<gpu::DeviceAllocator> allocator_;
  std::shared_ptr<Buffer> error_slot_;
  gpu::PinnedStaging staging_;
};

}  // namespace

std::unique_ptr<Backend> create(const BackendOptions&) {
  return std::make_unique<CudaBackend>();
}

}  // namespace baton::cuda
