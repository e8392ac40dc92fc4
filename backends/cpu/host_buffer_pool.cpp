#include "backends/cpu/host_buffer_pool.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "baton/error.h"

namespace baton::cpu {
namespace {

constexpr size_t kAlignment = 64;

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using Memory = std::unique_ptr<std::byte, FreeDeleter>;

}  // namespace

struct HostBufferPool::State {
  std::mutex mutex;
  std::multimap<size_t, Memory> free;  // by capacity
  size_t cached = 0;
  size_t max_cached;

  void give_back(Memory memory, size_t capacity) {
    std::lock_guard lock(mutex);
    if (cached + capacity > max_cached) return;  // `memory` frees itself
    cached += capacity;
    free.emplace(capacity, std::move(memory));
  }
};

namespace {

class PooledBuffer final : public Buffer {
 public:
  PooledBuffer(Memory memory, size_t size, size_t capacity,
               std::weak_ptr<HostBufferPool::State> pool)
      : memory_(std::move(memory)), size_(size), capacity_(capacity), pool_(std::move(pool)) {}
  ~PooledBuffer() override {
    if (auto pool = pool_.lock()) pool->give_back(std::move(memory_), capacity_);
  }
  std::byte* data() override { return memory_.get(); }
  size_t size() const override { return size_; }
  std::string_view device() const override { return "cpu"; }

 private:
  Memory memory_;
  size_t size_, capacity_;
  std::weak_ptr<HostBufferPool::State> pool_;
};

}  // namespace

HostBufferPool::HostBufferPool(size_t max_cached_bytes) : state_(std::make_shared<State>()) {
  state_->max_cached = max_cached_bytes;
}

HostBufferPool::~HostBufferPool() = default;

std::shared_ptr<Buffer> HostBufferPool::allocate(size_t bytes) {
  const size_t capacity = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  Memory memory;
  size_t got = capacity;
  {
    std::lock_guard lock(state_->mutex);
    // The smallest cached block that fits, if it wastes less than half of itself.
    const auto it = state_->free.lower_bound(capacity);
    if (it != state_->free.end() && it->first <= 2 * capacity) {
      got = it->first;
      memory = std::move(it->second);
      state_->cached -= got;
      state_->free.erase(it);
    }
  }
  if (!memory) {
    memory.reset(static_cast<std::byte*>(std::aligned_alloc(kAlignment, capacity)));
    if (!memory) {
      throw Error(ErrorCategory::kOutOfMemory,
                  "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    }
  }
  std::memset(memory.get(), 0, bytes);
  return std::make_shared<PooledBuffer>(std::move(memory), bytes, got, state_);
}

size_t HostBufferPool::cached_bytes() const {
  std::lock_guard lock(state_->mutex);
  return state_->cached;
}

}  // namespace baton::cpu
