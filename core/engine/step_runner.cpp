#include "core/engine/step_runner.h"

namespace baton {

std::vector<float> run_step(const Model& model, Backend& backend, const PagedKvCache& cache,
                            const StepInput& input) {
  Graph graph([&backend](DType dtype, Shape shape) {
    return backend.allocate_tensor(dtype, std::move(shape));
  });
  const Tensor logits = model.build_step(graph, input, cache);
  backend.execute(graph);
  std::vector<float> host(static_cast<size_t>(logits.numel()));
  backend.download(host.data(), logits, host.size() * sizeof(float));
  return host;
}

}  // namespace baton
