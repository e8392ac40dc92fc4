#pragma once

#include <cstdint>

#include "core/serving/engine/scheduler.h"
#include "models/lora/lora_slots.h"
#include "models/model.h"

namespace baton {

// The model's input for a plan (its sequences as `scheduler` holds them): its chunks' tokens
// flattened in chunk order with their block tables and positions, a logit row where a chunk reaches
// its sequence's last token, and each token's LoRA slot when any chunk is adapted (`slots` then
// holds them).
StepInput build_step_input(const StepPlan& plan, const Scheduler& scheduler, int32_t block_size,
                           int32_t context_size, const LoraSlots* slots);

}  // namespace baton
