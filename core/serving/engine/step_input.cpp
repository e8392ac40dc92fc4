#include "core/serving/engine/step_input.h"

#include <memory>

namespace baton {

StepInput build_step_input(const StepPlan& plan, const Scheduler& scheduler, int32_t block_size,
                           int32_t context_size, const LoraSlots* slots) {
  auto layout = std::make_shared<PagedBatch>();
  layout->block_size = block_size;
  StepInput input;
  auto lora = std::make_shared<StepInput::Lora>();
  bool adapted = false;
  for (size_t c = 0; c < plan.chunks.size(); ++c) {
    const ScheduledChunk& chunk = plan.chunks[c];
    const Sequence& s = scheduler.planned(chunk.seq);
    layout->block_tables.push_back(s.blocks.blocks);
    adapted = adapted || s.lora_slot >= 0;
    for (int32_t i = chunk.first; i < chunk.first + chunk.count; ++i) {
      input.tokens.push_back(s.tokens[i]);
      layout->token_seq.push_back(static_cast<int32_t>(c));
      layout->token_pos.push_back(i);
      lora->token_slots.push_back(s.lora_slot);
    }
    if (chunk.needs_logits)
      input.logit_rows.push_back(static_cast<int32_t>(input.tokens.size()) - 1);
  }
  input.layout = std::move(layout);
  input.context_size = context_size;
  if (adapted) {
    lora->slots = slots;
    input.lora = std::move(lora);
  }
  return input;
}

}  // namespace baton
