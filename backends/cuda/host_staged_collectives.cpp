// The CUDA plugin built where nccl.h is missing (NCCL ships apart from some CUDA installs): no
// device collectives, so all-reduces are staged through the host.

#include "backends/cuda/nccl_collectives.h"

namespace baton::cuda {

std::unique_ptr<gpu::DeviceCollectives> make_nccl_collectives() {
  return nullptr;
}

}  // namespace baton::cuda
