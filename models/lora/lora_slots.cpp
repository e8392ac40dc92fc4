#include "models/lora/lora_slots.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "baton/error.h"
#include "core/runtime/graph.h"
#include "core/runtime/half.h"

namespace baton {
namespace {

constexpr float kF16Max = 65504.0f;

// The slot's rows as the backend stores them: f32 as they are, f16 rounded to nearest.
std::vector<std::byte> slot_bytes(const std::vector<float>& values, DType dtype) {
  std::vector<std::byte> bytes(row_bytes(dtype, static_cast<int64_t>(values.size())));
  if (dtype == DType::kF32) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  auto* halves = reinterpret_cast<uint16_t*>(bytes.data());
  for (size_t i = 0; i < values.size(); ++i) halves[i] = fp32_to_fp16(values[i]);
  return bytes;
}

}  // namespace

size_t lora_slot_bytes(const ModelConfig& config, int32_t slots, int32_t max_rank, DType dtype) {
  size_t elements = 0;
  for (const auto& [node, shape] : lora_linear_shapes(config)) {
    elements += static_cast<size_t>(slots) * static_cast<size_t>(max_rank) *
                static_cast<size_t>(shape[0] + shape[1]);
  }
  return row_bytes(dtype, static_cast<int64_t>(elements));
}

DType lora_dtype(LoraType type) {
  return type == LoraType::kF32 ? DType::kF32 : DType::kF16;
}

LoraSlots::LoraSlots(Backend& backend, const ModelConfig& config, int32_t slots, int32_t max_rank,
                     DType dtype)
    : backend_(backend), slots_(slots), max_rank_(max_rank), dtype_(dtype) {
  if (slots < 1 || max_rank < 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "LoRA slots need at least one adapter of rank 1, got " + std::to_string(slots) +
                    " of rank " + std::to_string(max_rank));
  }
  if (!is_lora_slot_dtype(dtype)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "LoRA slots hold f16 or f32, not " + std::string(to_string(dtype)));
  }
  for (const auto& [node, shape] : lora_linear_shapes(config)) {
    Stack stack{backend.allocate_tensor(dtype, {slots, max_rank, shape[1]}),
                backend.allocate_tensor(dtype, {slots, max_rank, shape[0]})};
    for (const Tensor& t : {stack.a, stack.bt}) {
      const std::vector<std::byte> zeros(t.nbytes());
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
                    std::to_string(max_rank_) + " (max_lora_rank)");
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
    if (dtype_ == DType::kF16) {
      for (const std::vector<float>* values : {&a, &bt}) {
        const auto largest = std::max_element(values->begin(), values->end(), [](float x, float y) {
          return std::abs(x) < std::abs(y);
        });
        if (largest != values->end() && !(std::abs(*largest) <= kF16Max)) {
          throw Error(ErrorCategory::kInvalidArgument,
                      "the LoRA adapter '" + adapter.name + "' has a value of " +
                          std::to_string(*largest) + " in " + node +
                          " (scale folded in), beyond f16; serve it with lora_dtype f32");
        }
      }
    }
    const std::vector<std::byte> a_bytes = slot_bytes(a, dtype_), bt_bytes = slot_bytes(bt, dtype_);
    backend_.upload(stack.a.slice_rows(slot, 1), a_bytes.data(), a_bytes.size());
    backend_.upload(stack.bt.slice_rows(slot, 1), bt_bytes.data(), bt_bytes.size());
  }
}

const LoraSlots::Stack* LoraSlots::find(const std::string& node) const {
  const auto it = stacks_.find(node);
  return it == stacks_.end() ? nullptr : &it->second;
}

}  // namespace baton
