#include "core/engine/lora_residency.h"

#include <utility>

#include "baton/error.h"

namespace baton {

LoraResidency::LoraResidency(std::unique_ptr<LoraSlots> slots)
    : slots_(std::move(slots)), table_(static_cast<size_t>(slots_->slots())) {}

void LoraResidency::add(std::shared_ptr<const LoraAdapter> adapter) {
  if (adapters_.contains(adapter->name)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a LoRA adapter named '" + adapter->name + "' is already loaded");
  }
  if (adapter->rank() > slots_->max_rank()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the LoRA adapter '" + adapter->name + "' has rank " +
                    std::to_string(adapter->rank()) + ", above the maximum of " +
                    std::to_string(slots_->max_rank()) + " (--max-lora-rank)");
  }
  const std::string name = adapter->name;
  adapters_[name] = Handle{std::move(adapter), next_id_++};
}

void LoraResidency::remove(const std::string& name) {
  const auto found = adapters_.find(name);
  if (found == adapters_.end()) {
    throw Error(ErrorCategory::kInvalidArgument, "no LoRA adapter named '" + name + "'");
  }
  // An unpinned slot is freed at once; a pinned one keeps the weights until its requests end.
  // Either way the registration's id is never asked for again by name.
  for (Slot& slot : table_) {
    if (slot.id == found->second.id && slot.pins == 0) slot = Slot{};
  }
  adapters_.erase(found);
}

std::optional<LoraResidency::Handle> LoraResidency::find(const std::string& name) const {
  const auto found = adapters_.find(name);
  if (found == adapters_.end()) return std::nullopt;
  return found->second;
}

std::optional<LoraResidency::Pin> LoraResidency::acquire(const Handle& handle) {
  std::optional<size_t> chosen;
  for (size_t i = 0; i < table_.size() && !chosen; ++i) {
    if (table_[i].id == handle.id) chosen = i;
  }
  if (!chosen) {
    // A free slot, else the least recently used one that no request pins.
    for (size_t i = 0; i < table_.size(); ++i) {
      if (table_[i].pins > 0) continue;
      if (!chosen || table_[i].last_used < table_[*chosen].last_used) chosen = i;
    }
    if (!chosen) return std::nullopt;
    slots_->load(static_cast<int32_t>(*chosen), *handle.adapter);
    table_[*chosen] = Slot{.id = handle.id};
  }
  Slot& slot = table_[*chosen];
  ++slot.pins;
  slot.last_used = ++clock_;
  return Pin(this, static_cast<int32_t>(*chosen), handle.id);
}

void LoraResidency::release(int32_t slot) {
  --table_[static_cast<size_t>(slot)].pins;
}

LoraResidency::Pin& LoraResidency::Pin::operator=(Pin&& other) noexcept {
  if (this != &other) {
    if (owner_) owner_->release(slot_);
    owner_ = std::exchange(other.owner_, nullptr);
    slot_ = other.slot_;
    id_ = other.id_;
  }
  return *this;
}

LoraResidency::Pin::~Pin() {
  if (owner_) owner_->release(slot_);
}

}  // namespace baton
