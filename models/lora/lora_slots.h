#pragma once

// Room on a backend for several LoRA adapters at once, the form a batch mixing adapters reads
// them in (Punica's and S-LoRA's layout): for each linear node of the model, a [slots, r, in] and
// bt [slots, r, out] (B transposed), r the largest rank served. An adapter of lower rank, or one
// that does not adapt a node, leaves zeros there, which add nothing.
//
// The slots hold f16 unless asked for f32: a decode step reads every slot row its tokens use, and
// at f32 eight rank-16 adapters of a 1.1B model added 7.7% to the bytes a step reads (the f16
// weights LoRA is trained and shipped in lose nothing; f32 adapters round once, to 2^-11).

#include <cstdint>
#include <map>
#include <string>

#include "baton/llm_options.h"
#include "core/runtime/backend.h"
#include "models/lora/lora_adapter.h"

namespace baton {

// The backend memory LoraSlots takes for a model of `config`.
size_t lora_slot_bytes(const ModelConfig& config, int32_t slots, int32_t max_rank, DType dtype);
// The dtype of LLMOptions::lora_dtype.
DType lora_dtype(LoraType type);

class LoraSlots {
 public:
  struct Stack {
    Tensor a, bt;
  };

  // Allocates and zeroes every slot. Throws Error(kInvalidArgument) unless slots >= 1,
  // max_rank >= 1 and dtype is f32 or f16.
  LoraSlots(Backend& backend, const ModelConfig& config, int32_t slots, int32_t max_rank,
            DType dtype = DType::kF16);

  int32_t slots() const { return slots_; }
  int32_t max_rank() const { return max_rank_; }
  DType dtype() const { return dtype_; }

  // Puts `adapter` in `slot`, replacing what was there. Throws Error(kInvalidArgument) when its
  // rank exceeds max_rank() or it adapts a node the model does not have.
  void load(int32_t slot, const LoraAdapter& adapter);
  // The stacks of a linear node; null for a node no adapter can adapt.
  const Stack* find(const std::string& node) const;

 private:
  Backend& backend_;
  int32_t slots_, max_rank_;
  DType dtype_;
  std::map<std::string, Stack> stacks_;
};

}  // namespace baton
