#pragma once

// Where LoRA adapters' weights are: in the backend's slots (LoraSlots), in host memory, or only
// in their files. A request pins its adapter's slot for as long as it lives; an adapter asked
// for that has no slot takes a free one, or the least recently used slot whose adapter no
// request holds. When every slot is pinned the request waits, and the others go on. Host memory
// keeps the weights of at most `host_capacity` registered adapters: the least recently used
// beyond that drop theirs, and are read again from their files, on a thread of their own, when
// a request next asks for them.

#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/lora_options.h"
#include "models/lora/lora_slots.h"

namespace baton {

class LoraResidency {
 public:
  // host_capacity 0 keeps every registered adapter's weights in host memory.
  LoraResidency(std::unique_ptr<LoraSlots> slots, const ModelConfig& base, int32_t host_capacity);

  // An adapter as registered. Requests hold it from their arrival, so that they can still take
  // a slot after its name is removed.
  struct Registration {
    // How to read it again; the path is empty for an adapter built in memory, which stays there.
    LoraOptions file;
    // Keeps its prefix-cache blocks apart from other adapters' (ids are never reused, so a
    // replaced adapter's blocks are not shared either).
    uint64_t id = 0;
    std::shared_ptr<const LoraAdapter> weights;  // null while only the file has them
    std::exception_ptr read_failure;             // for the requests that waited for the read
    uint64_t last_used = 0;
  };
  using Handle = std::shared_ptr<Registration>;

  // Registers an adapter under its name. Throws Error(kInvalidArgument) when the name is taken or
  // its rank exceeds the slots'.
  void add(std::shared_ptr<const LoraAdapter> adapter);
  // Forgets an adapter's name; the requests that asked for it finish with it. Throws
  // Error(kInvalidArgument) when there is none of that name.
  void remove(const std::string& name);
  Handle find(const std::string& name) const;

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
  // Pins the adapter's slot, loading it into one first when it has none; nullopt while every
  // slot is pinned by other adapters or the weights are still to be read from the file. Throws
  // Error when the file could not be read again, to a request that was waiting for that read
  // (not `arriving`, asking for the first time: that one starts a new read).
  std::optional<Pin> acquire(const Handle& adapter, bool arriving);
  // Blocks until the read under way ends or `limit` passes: for when nothing else can run.
  void wait_for_reading(std::chrono::milliseconds limit) const;

  const LoraSlots& slots() const { return *slots_; }

 private:
  struct Slot {
    uint64_t id = 0;  // the registration loaded here; 0: free
    int32_t pins = 0;
    uint64_t last_used = 0;
  };
  // The weights of `adapter`, or null while they are to be read: starts that read when none is
  // under way. Throws the adapter's last read failure unless `arriving`.
  std::shared_ptr<const LoraAdapter> weights_of(const Handle& adapter, bool arriving);
  // Gives a finished read's weights, or its failure, to its adapter.
  void collect_reading();
  // Drops the weights of the least recently used registered adapters beyond the capacity, other
  // than `keep`.
  void evict_from_host(const Registration& keep);
  int32_t adapters_in_host_memory() const;
  void release(int32_t slot);

  std::unique_ptr<LoraSlots> slots_;
  const ModelConfig& base_;  // the model's, which outlives the engine and so any read
  int32_t host_capacity_;
  std::map<std::string, Handle> adapters_;
  std::vector<Slot> table_;
  uint64_t next_id_ = 1;
  uint64_t clock_ = 0;
  // The adapter whose file is being read, and the read: std::async's future, whose destruction
  // waits for the read to end.
  Handle being_read_;
  std::future<std::shared_ptr<const LoraAdapter>> reading_;
};

}  // namespace baton
