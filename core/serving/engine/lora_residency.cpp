#include "core/serving/engine/lora_residency.h"

#include <algorithm>
#include <utility>

#include "baton/error.h"

namespace baton {

LoraResidency::LoraResidency(std::unique_ptr<LoraSlots> slots, const ModelConfig& base,
                             int32_t host_capacity)
    : slots_(std::move(slots)),
      base_(base),
      host_capacity_(host_capacity),
      table_(static_cast<size_t>(slots_->slots())) {}

void LoraResidency::add(std::shared_ptr<const LoraAdapter> adapter) {
  if (adapters_.contains(adapter->name)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a LoRA adapter named '" + adapter->name + "' is already loaded");
  }
  if (adapter->rank() > slots_->max_rank()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the LoRA adapter '" + adapter->name + "' has rank " +
                    std::to_string(adapter->rank()) + ", above the maximum of " +
                    std::to_string(slots_->max_rank()) + " (max_lora_rank)");
  }
  auto registration =
      std::make_shared<Registration>(Registration{.file = {.name = adapter->name,
                                                           .path = adapter->source.string(),
                                                           .scale = adapter->user_scale},
                                                  .id = next_id_++,
                                                  .weights = std::move(adapter),
                                                  .last_used = ++clock_});
  adapters_[registration->file.name] = registration;
  evict_from_host(*registration);
}

void LoraResidency::remove(const std::string& name) {
  const auto found = adapters_.find(name);
  if (found == adapters_.end()) {
    throw Error(ErrorCategory::kInvalidArgument, "no LoRA adapter named '" + name + "'");
  }
  // An unpinned slot is freed at once; a pinned one keeps the weights until its requests end.
  // Either way the registration's id is never asked for again by name.
  for (Slot& slot : table_) {
    if (slot.id == found->second->id && slot.pins == 0) slot = Slot{};
  }
  adapters_.erase(found);
}

LoraResidency::Handle LoraResidency::find(const std::string& name) const {
  const auto found = adapters_.find(name);
  return found == adapters_.end() ? nullptr : found->second;
}

std::shared_ptr<const LoraAdapter> LoraResidency::weights_of(const Handle& adapter, bool arriving) {
  if (adapter->weights) return adapter->weights;
  collect_reading();
  if (adapter->weights) return adapter->weights;
  if (adapter->read_failure) {
    // A failed read belongs to the requests that were waiting for it; a new one reads again.
    const std::exception_ptr failure = std::exchange(adapter->read_failure, nullptr);
    if (!arriving) std::rethrow_exception(failure);
  }
  if (!being_read_) {
    reading_ = std::async(std::launch::async, [file = adapter->file, &base = base_] {
      return read_lora_adapter(file, base);
    });
    being_read_ = adapter;  // after std::async, which may throw
  }
  return nullptr;
}

void LoraResidency::collect_reading() {
  if (!being_read_ || reading_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return;
  }
  const Handle adapter = std::exchange(being_read_, nullptr);
  const std::string failed =
      "the LoRA adapter '" + adapter->file.name + "' could not be read again: ";
  try {
    adapter->weights = reading_.get();
    evict_from_host(*adapter);
  } catch (const Error& e) {
    adapter->read_failure = std::make_exception_ptr(Error(e.category(), failed + e.what()));
  } catch (const std::exception& e) {
    adapter->read_failure =
        std::make_exception_ptr(Error(ErrorCategory::kInvalidModel, failed + e.what()));
  }
}

void LoraResidency::evict_from_host(const Registration& keep) {
  if (host_capacity_ <= 0) return;
  while (adapters_in_host_memory() > host_capacity_) {
    Registration* oldest = nullptr;
    for (const auto& [name, adapter] : adapters_) {
      // One built in memory has no file to be read again from.
      if (adapter.get() == &keep || !adapter->weights || adapter->file.path.empty()) continue;
      if (!oldest || adapter->last_used < oldest->last_used) oldest = adapter.get();
    }
    if (!oldest) return;
    oldest->weights.reset();
  }
}

int32_t LoraResidency::adapters_in_host_memory() const {
  return static_cast<int32_t>(std::ranges::count_if(
      adapters_, [](const auto& entry) { return entry.second->weights != nullptr; }));
}

std::optional<LoraResidency::Pin> LoraResidency::acquire(const Handle& adapter, bool arriving) {
  adapter->last_used = ++clock_;
  std::optional<size_t> chosen;
  for (size_t i = 0; i < table_.size() && !chosen; ++i) {
    if (table_[i].id == adapter->id) chosen = i;
  }
  if (!chosen) {
    // A free slot, else the least recently used one that no request pins.
    for (size_t i = 0; i < table_.size(); ++i) {
      if (table_[i].pins > 0) continue;
      if (!chosen || table_[i].last_used < table_[*chosen].last_used) chosen = i;
    }
    if (!chosen) return std::nullopt;
    const std::shared_ptr<const LoraAdapter> weights = weights_of(adapter, arriving);
    if (!weights) return std::nullopt;
    // Free until loaded whole: a load that fails halfway leaves no adapter's name on it.
    table_[*chosen] = Slot{};
    slots_->load(static_cast<int32_t>(*chosen), *weights);
    table_[*chosen] = Slot{.id = adapter->id};
  }
  Slot& slot = table_[*chosen];
  ++slot.pins;
  slot.last_used = clock_;
  return Pin(this, static_cast<int32_t>(*chosen), adapter->id);
}

void LoraResidency::wait_for_reading(std::chrono::milliseconds limit) const {
  if (being_read_) reading_.wait_for(limit);
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
