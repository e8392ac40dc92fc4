#include "backends/cpu/host_buffer_pool.h"

#include <atomic>
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

  // Memory of at least `bytes`, from `pool`'s cache when it has a block that fits (a null pool,
  // one already gone, has none), zero-filled when `zero`; `capacity` receives its size.
  static Memory take(State* pool, size_t bytes, size_t& capacity, bool zero) {
    capacity = capacity_for(bytes);
    Memory memory;
    if (pool) {
      std::lock_guard lock(pool->mutex);
      // The smallest cached block that fits, if it wastes less than half of itself.
      const auto it = pool->free.lower_bound(capacity);
      if (it != pool->free.end() && it->first <= 2 * capacity) {
        capacity = it->first;
        memory = std::move(it->second);
        pool->cached -= capacity;
        pool->free.erase(it);
      }
    }
    if (!memory) memory = fresh(capacity);
    if (zero) std::memset(memory.get(), 0, bytes);
    return memory;
  }

  void give_back(Memory memory, size_t capacity) {
    std::lock_guard lock(mutex);
    if (cached + capacity > max_cached) return;  // `memory` frees itself
    cached += capacity;
    free.emplace(capacity, std::move(memory));
  }

  // Whole cache lines, as aligned_alloc wants a multiple of the alignment.
  static size_t capacity_for(size_t bytes) {
    return std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  }

  static Memory fresh(size_t capacity) {
    Memory memory(static_cast<std::byte*>(std::aligned_alloc(kAlignment, capacity)));
    if (!memory) {
      throw Error(ErrorCategory::kOutOfMemory,
                  "cannot allocate " + std::to_string(capacity) + " bytes of host memory");
    }
    return memory;
  }
};

namespace {

// Takes its memory from the pool at the first data() and gives it back on discard() or
// destruction, so a graph's outputs hold memory only while they are live. The first data() may
// come from several kernel threads at once (a KV cache first written by a parallel loop), so
// taking the memory is guarded.
class PooledBuffer final : public Buffer {
 public:
  PooledBuffer(size_t size, std::weak_ptr<HostBufferPool::State> pool)
      : size_(size), pool_(std::move(pool)) {}
  ~PooledBuffer() override { discard(); }

  std::byte* data() override { return acquire(true); }
  std::byte* data_for_overwrite() override { return acquire(false); }
  size_t size() const override { return size_; }
  std::string_view device() const override { return "cpu"; }

  void discard() override {
    std::lock_guard lock(mutex_);
    if (!memory_) return;
    data_.store(nullptr, std::memory_order_release);
    if (auto pool = pool_.lock()) pool->give_back(std::move(memory_), capacity_);
    memory_.reset();
  }

 private:
  std::byte* acquire(bool zero) {
    if (std::byte* p = data_.load(std::memory_order_acquire)) return p;
    std::lock_guard lock(mutex_);
    if (!memory_) {
      memory_ = HostBufferPool::State::take(pool_.lock().get(), size_, capacity_, zero);
      data_.store(memory_.get(), std::memory_order_release);
    }
    return memory_.get();
  }

  std::mutex mutex_;
  std::atomic<std::byte*> data_{nullptr};
  Memory memory_;
  size_t size_, capacity_ = 0;
  std::weak_ptr<HostBufferPool::State> pool_;
};

}  // namespace

HostBufferPool::HostBufferPool(size_t max_cached_bytes) : state_(std::make_shared<State>()) {
  state_->max_cached = max_cached_bytes;
}

HostBufferPool::~HostBufferPool() = default;

std::shared_ptr<Buffer> HostBufferPool::allocate(size_t bytes) {
  return std::make_shared<PooledBuffer>(bytes, state_);
}

size_t HostBufferPool::cached_bytes() const {
  std::lock_guard lock(state_->mutex);
  return state_->cached;
}

}  // namespace baton::cpu
