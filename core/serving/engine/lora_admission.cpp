#include "core/serving/engine/lora_admission.h"

#include <chrono>

#include "baton/error.h"
#include "models/lora/lora_slots.h"

namespace baton {

LoraAdmission::LoraAdmission(Backend& backend, const Model& model, const LLMOptions& options,
                             int32_t slots, bool distributed) {
  if (slots <= 0) return;
  if (model.shard().tp_size > 1 || distributed) {
    throw Error(ErrorCategory::kUnsupported,
                "LoRA adapters are not supported with tensor or pipeline parallelism yet");
  }
  residency_ = std::make_unique<LoraResidency>(
      std::make_unique<LoraSlots>(backend, model.config(), slots, options.max_lora_rank,
                                  lora_dtype(options.lora_dtype)),
      model.config(), options.max_cpu_loras);
}

void LoraAdmission::add(std::shared_ptr<const LoraAdapter> adapter) {
  if (!residency_) {
    throw Error(ErrorCategory::kInvalidArgument,
                "this engine has no LoRA slots: set a maximum of adapters (max_loras)");
  }
  residency_->add(std::move(adapter));
}

void LoraAdmission::remove(const std::string& name) {
  if (!residency_) {
    throw Error(ErrorCategory::kInvalidArgument, "no LoRA adapter named '" + name + "'");
  }
  residency_->remove(name);
}

LoraResidency::Handle LoraAdmission::find(const std::string& name) const {
  LoraResidency::Handle handle = residency_ ? residency_->find(name) : nullptr;
  if (!handle) {
    throw Error(
        ErrorCategory::kInvalidArgument,
        "no LoRA adapter named '" + name + "'" + (residency_ ? "" : ": this engine serves none"));
  }
  return handle;
}

void LoraAdmission::admit_parked(const std::function<bool(uint64_t request)>& admit) {
  for (auto it = parked_.begin(); it != parked_.end();) {
    it = admit(*it) ? parked_.erase(it) : it + 1;
  }
}

void LoraAdmission::wait_for_parked() const {
  // Long enough not to spin, short enough that a request arriving meanwhile barely waits.
  constexpr std::chrono::milliseconds kWait(5);
  if (residency_) residency_->wait_for_reading(kWait);
}

}  // namespace baton
