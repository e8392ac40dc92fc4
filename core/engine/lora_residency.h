#pragma once

// Which LoRA adapters are in the backend's slots (LoraSlots) and which wait on the host. A
// request pins its adapter's slot for as long as it lives; an adapter asked for that has no slot
// takes a free one, or the least recently used slot whose adapter no request holds. When every
// slot is pinned the request waits, and the others go on.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/lora/lora_slots.h"

namespace baton {

class LoraResidency {
 public:
  explicit LoraResidency(std::unique_ptr<LoraSlots> slots);

  // An adapter as registered: what a request holds from its arrival, so that it can still take
  // a slot after the adapter's name is removed. The id keeps its prefix-cache blocks apart from
  // other adapters' (ids are never reused, so a replaced adapter's blocks are not shared either).
  struct Handle {
    std::shared_ptr<const LoraAdapter> adapter;
    uint64_t id = 0;
  };

  // Registers an adapter under its name. Throws Error(kInvalidArgument) when the name is taken or
  // its rank exceeds the slots'.
  void add(std::shared_ptr<const LoraAdapter> adapter);
  // Forgets an adapter's name; the requests that asked for it finish with it. Throws
  // Error(kInvalidArgument) when there is none of that name.
  void remove(const std::string& name);
  std::optional<Handle> find(const std::string& name) const;

  // What an admitted request holds: its adapter's slot and id. Releases the slot when destroyed.
  class Pin {
   public:
    Pin() = default;
    Pin(LoraResidency* owner, int32_t slot, uint64_t id) : owner_(owner), slot_(slot), id_(id) {}
    Pin(Pin&& other) noexcept { *this = std::move(other); }
    Pin& operator=(Pin&& other) noexcept;
    ~Pin();
    int32_t slot() const { return slot_; }
    uint64_t id() const { return id_; }

   private:
    LoraResidency* owner_ = nullptr;
    int32_t slot_ = -1;
    uint64_t id_ = 0;
  };
  // Pins the adapter's slot, loading it into one first when it has none; nullopt when every
  // slot is pinned by other adapters.
  std::optional<Pin> acquire(const Handle& handle);

  const LoraSlots& slots() const { return *slots_; }

 private:
  struct Slot {
    uint64_t id = 0;  // the registration loaded here; 0: free
    int32_t pins = 0;
    uint64_t last_used = 0;
  };
  void release(int32_t slot);

  std::unique_ptr<LoraSlots> slots_;
  std::map<std::string, Handle> adapters_;
  std::vector<Slot> table_;
  uint64_t next_id_ = 1;
  uint64_t clock_ = 0;
};

}  // namespace baton
