#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "baton/llm_options.h"
#include "core/runtime/backend.h"
#include "core/serving/engine/lora_residency.h"
#include "models/lora/lora_adapter.h"
#include "models/model.h"

namespace baton {

// Which requests naming a LoRA adapter may run: the adapters served by name, the slots of
// backend memory they are loaded into (LoraResidency), and the requests parked, oldest first,
// until their adapter has a slot.
class LoraAdmission {
 public:
  // `slots` adapters at once, of at most options.max_lora_rank; none when 0, and then every
  // adapter is refused. Throws Error(kUnsupported) for slots on a model split over ranks.
  LoraAdmission(Backend& backend, const Model& model, const LLMOptions& options, int32_t slots,
                bool distributed);

  // Serves `adapter` under its name from now on. Throws Error(kInvalidArgument) when there are
  // no slots, the name is taken, or its rank is above max_lora_rank.
  void add(std::shared_ptr<const LoraAdapter> adapter);
  // Stops serving an adapter to new requests; those already holding it finish with it.
  void remove(const std::string& name);
  // The adapter `name` as registered now. Throws Error(kInvalidArgument) for an unknown name.
  LoraResidency::Handle find(const std::string& name) const;
  // The adapter's slot, loaded if it has none; nothing while no slot is free yet or its weights
  // are still being read. Throws when a read that a parked request waited for failed.
  std::optional<LoraResidency::Pin> pin(const LoraResidency::Handle& adapter, bool arriving) {
    return residency_->acquire(adapter, arriving);
  }

  void park(uint64_t request) { parked_.push_back(request); }
  bool has_parked() const { return !parked_.empty(); }
  size_t parked() const { return parked_.size(); }
  // Offers each parked request, oldest first, to `admit`, which returns whether it left the
  // queue (admitted, failed or gone) or still waits.
  void admit_parked(const std::function<bool(uint64_t request)>& admit);
  // With nothing to compute but parked requests: waits a little for an adapter being read
  // rather than have the caller spin.
  void wait_for_parked() const;

  // The slots a step's adapted tokens read; null without slots.
  const LoraSlots* slots() const { return residency_ ? &residency_->slots() : nullptr; }

 private:
  std::unique_ptr<LoraResidency> residency_;  // null: no slots
  std::deque<uint64_t> parked_;
};

}  // namespace baton
