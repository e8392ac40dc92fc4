#include "models/lora/lora_slots.h"

#include <vector>

#include "baton/error.h"

namespace baton {

size_t lora_slot_bytes(const ModelConfig& config, int32_t slots, int32_t max_rank) {
  size_t floats = 0;
  for (const auto& [node, shape] : lora_linear_shapes(config)) {
    floats += static_cast<size_t>(slots) * static_cast<size_t>(max_rank) *
              static_cast<size_t>(shape[0] + shape[1]);
  }
  return floats * sizeof(float);
}

LoraSlots::LoraSlots(Backend& backend, const ModelConfig& config, int32_t slots, int32_t max_rank)
    : backend_(backend), slots_(slots), max_rank_(max_rank) {
  if (slots < 1 || max_rank < 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "LoRA slots need at least one adapter of rank 1, got " + std::to_string(slots) +
                    " of rank " + std::to_string(max_rank));
  }
  for (const auto& [node, shape] : lora_linear_shapes(config)) {
    Stack stack{backend.allocate_tensor(DType::kF32, {slots, max_rank, shape[1]}),
                backend.allocate_tensor(DType::kF32, {slots, max_rank, shape[0]})};
    for (const Tensor& t : {stack.a, stack.bt}) {
      const std::vector<float> zeros(static_cast<size_t>(t.numel()));
      backend.upload(t, zeros.data(), t.nbytes());
    }
    stacks_.emplace(node, std::move(stack));
  }
}

void LoraSlots::load(int32_t slot, const LoraAdapter& adapter) {
  if (slot < 0 || slot >= slots_) {
    throw Error(ErrorCategory::kInvalidArgument,
                "LoRA slot " + std::to_string(slot) + " of " + std::to_string(slots_));
  }
  if (adapter.rank() > max_rank_) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the LoRA adapter '" + adapter.name + "' has rank " +
                    std::to_string(adapter.rank()) + ", above the maximum of " +
                    std::to_string(max_rank_) + " (--max-lora-rank)");
  }
  for (const auto& [node, target] : adapter.targets) {
    if (!stacks_.contains(node)) {
      throw Error(ErrorCategory::kInvalidArgument, "the LoRA adapter '" + adapter.name +
                                                       "' adapts " + node +
                                                       ", which the model does not have");
    }
  }
  for (const auto& [node, stack] : stacks_) {
    const auto found = adapter.targets.find(node);
    const int64_t in = stack.a.dim(2), out = stack.bt.dim(2);
    // The slot's rows, zero past the adapter's rank: a [max_rank, in], bt [max_rank, out].
    std::vector<float> a(static_cast<size_t>(max_rank_ * in));
    std::vector<float> bt(static_cast<size_t>(max_rank_ * out));
    if (found != adapter.targets.end()) {
      const Tensor& ta = found->second.a;
      const Tensor& tb = found->second.b;
      const int64_t rank = ta.dim(0);
      std::copy_n(ta.data<float>(), rank * in, a.begin());
      for (int64_t o = 0; o < out; ++o) {
        for (int64_t j = 0; j < rank; ++j) bt[j * out + o] = tb.data<float>()[o * rank + j];
      }
    }
    backend_.upload(stack.a.slice_rows(slot, 1), a.data(), a.size() * sizeof(float));
    backend_.upload(stack.bt.slice_rows(slot, 1), bt.data(), bt.size() * sizeof(float));
  }
}

const LoraSlots::Stack* LoraSlots::find(const std::string& node) const {
  const auto it = stacks_.find(node);
  return it == stacks_.end() ? nullptr : &it->second;
}

}  // namespace baton
