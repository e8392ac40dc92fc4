#include "backends/gpusim/block_runner.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <vector>

#include "backends/gpusim/device_memory.h"
#include "backends/gpusim/device_state.h"
#include "backends/gpusim/fiber_switch.h"

namespace gpusim {

thread_local const ThreadCoordinates* current_thread = nullptr;

namespace {

// Kernel frames are small; the sanitizer's callbacks and a fault report add a little.
constexpr size_t kStackBytes = 128 * 1024;
// Dynamic and static shared memory of one block, with a red zone after each array; more than
// any kernel may ask for (dynamic_shared_limit).
constexpr size_t kSharedArenaBytes = 512 * 1024;
constexpr size_t kRedZone = 64;

enum class FiberState { kReady, kAtBarrier, kAtShuffle, kDone };

struct Fiber {
  FiberContext context;
  ThreadCoordinates coords;
  FiberState state = FiberState::kReady;
  int warp = 0, lane = 0;
  uint64_t shuffles = 0;  // completed; its parity picks the exchange buffer of the next
  size_t shared_declared = 0;
};

struct SharedArray {
  size_t offset, bytes;
};

// One per host thread that runs grids (a stream's worker): fiber stacks and the shared-memory
// arena are reused from block to block.
struct Runner {
  ~Runner() {
    for (void* stack : stacks) munmap(stack, kStackBytes);
    if (arena != nullptr) DeviceMemory::instance().release(arena);
  }

  std::vector<void*> stacks;
  std::byte* arena = nullptr;
  size_t arena_used = 0;  // bytes of the arena whose shadow the last block changed

  const Grid* grid = nullptr;
  std::vector<Fiber> fibers;
  std::vector<std::vector<uint64_t>> exchange[2];  // [parity][warp][lane]
  std::vector<SharedArray> shared_arrays;
  size_t shared_total = 0;
  FiberContext scheduler;
  Fiber* running = nullptr;
  bool faulted = false;
  // Not a std::string: the faulting fiber is abandoned mid-call, so what it leaves must need no
  // destructor.
  char fault_text[512];
};

thread_local Runner runner;

void park(FiberState state) {
  Fiber& fiber = *runner.running;
  fiber.state = state;
  switch_fiber(fiber.context, runner.scheduler);
}

void fiber_main(void*) {
  runner.grid->thread_body();
  park(FiberState::kDone);  // never resumed
}

void resume(Fiber& fiber) {
  runner.running = &fiber;
  current_thread = &fiber.coords;
  switch_fiber(runner.scheduler, fiber.context);
  runner.running = nullptr;
  current_thread = nullptr;
}

std::string where(const Dim3& block, const Fiber* fiber) {
  std::string s = "kernel " + runner.grid->kernel_name + ", block " + to_string(block);
  if (fiber != nullptr) s += ", thread " + to_string(fiber->coords.thread_idx);
  return s;
}

void prepare_fibers(const Dim3& block_idx) {
  const KernelLaunch& config = runner.grid->config;
  const size_t n = static_cast<size_t>(config.block.x) * config.block.y * config.block.z;
  const int lanes = warp_size();
  while (runner.stacks.size() < n) {
    void* stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stack == MAP_FAILED) throw std::bad_alloc();
    // The lowest page is a guard: a thread that overflows its stack faults rather than writing
    // over its neighbour's.
    if (mprotect(stack, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE) != 0) {
      munmap(stack, kStackBytes);
      throw std::bad_alloc();
    }
    runner.stacks.push_back(stack);
  }
  runner.fibers.assign(n, Fiber{});
  for (size_t t = 0; t < n; ++t) {
    Fiber& f = runner.fibers[t];
    const auto index = static_cast<unsigned int>(t);
    f.coords =
        ThreadCoordinates{Dim3(index % config.block.x, index / config.block.x % config.block.y,
                               index / (config.block.x * config.block.y)),
                          block_idx, config.block, config.grid};
    f.warp = static_cast<int>(t) / lanes;
    f.lane = static_cast<int>(t) % lanes;
    prepare_fiber(f.context, runner.stacks[t], kStackBytes, fiber_main, nullptr);
  }
  const size_t warps = (n + static_cast<size_t>(lanes) - 1) / static_cast<size_t>(lanes);
  for (auto& buffers : runner.exchange) buffers.assign(warps, std::vector<uint64_t>(lanes, 0));
}

// Shared memory starts unaddressable but for the dynamic part, which is uninitialised.
void prepare_shared_memory() {
  DeviceMemory& memory = DeviceMemory::instance();
  if (runner.arena == nullptr) {
    runner.arena = static_cast<std::byte*>(memory.allocate(kSharedArenaBytes));
    if (runner.arena == nullptr) throw std::bad_alloc();
  }
  memory.mark(runner.arena, runner.arena_used > 0 ? runner.arena_used : kSharedArenaBytes,
              Shadow::kUnaddressable);
  const size_t dynamic = runner.grid->config.shared_bytes;
  memory.mark(runner.arena, dynamic, Shadow::kUninitialized);
  runner.arena_used = (dynamic + 15) / 16 * 16 + kRedZone;
  runner.shared_arrays.clear();
  runner.shared_total = dynamic;
}

// Opens the barriers every expected thread has reached; false when none could open.
bool open_barriers() {
  bool opened = false;
  const int lanes = warp_size();
  const size_t n = runner.fibers.size();
  for (size_t first = 0; first < n; first += static_cast<size_t>(lanes)) {
    const size_t end = std::min(n, first + static_cast<size_t>(lanes));
    bool all = true;
    for (size_t t = first; t < end; ++t) all &= runner.fibers[t].state == FiberState::kAtShuffle;
    if (!all) continue;
    for (size_t t = first; t < end; ++t) runner.fibers[t].state = FiberState::kReady;
    opened = true;
  }
  if (opened) return true;
  for (const Fiber& f : runner.fibers) {
    if (f.state != FiberState::kAtBarrier) return false;
  }
  for (Fiber& f : runner.fibers) f.state = FiberState::kReady;
  return true;
}

// Why no thread can go on: some wait at a barrier that others never reach.
std::string describe_stall(const Dim3& block_idx) {
  size_t at_barrier = 0;
  const Fiber* missing = nullptr;
  const Fiber* shuffling = nullptr;
  for (const Fiber& f : runner.fibers) {
    if (f.state == FiberState::kAtBarrier) ++at_barrier;
    if (f.state == FiberState::kAtShuffle && shuffling == nullptr) shuffling = &f;
  }
  if (shuffling != nullptr) {
    for (const Fiber& f : runner.fibers) {
      if (f.warp == shuffling->warp && f.state != FiberState::kAtShuffle) {
        missing = &f;
        break;
      }
    }
    return where(block_idx, missing) + ": " +
           (missing->state == FiberState::kDone ? "exited" : "waits at __syncthreads()") +
           " while lane " + std::to_string(shuffling->lane) +
           " of its warp waits in a warp shuffle";
  }
  for (const Fiber& f : runner.fibers) {
    if (f.state == FiberState::kDone) {
      missing = &f;
      break;
    }
  }
  return where(block_idx, missing) + ": exited without reaching the __syncthreads() that " +
         std::to_string(at_barrier) + " of the block's " + std::to_string(runner.fibers.size()) +
         " threads wait at";
}

std::string run_block(const Dim3& block_idx) {
  prepare_fibers(block_idx);
  prepare_shared_memory();
  runner.faulted = false;
  for (;;) {
    for (Fiber& f : runner.fibers) {
      if (f.state != FiberState::kReady) continue;
      resume(f);
      if (runner.faulted) return where(block_idx, &f) + ": " + runner.fault_text;
    }
    bool all_done = true;
    for (const Fiber& f : runner.fibers) all_done &= f.state == FiberState::kDone;
    if (all_done) return "";
    if (!open_barriers()) return describe_stall(block_idx);
  }
}

}  // namespace

std::string to_string(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

std::string run_grid(const Grid& grid) {
  runner.grid = &grid;
  const Dim3& g = grid.config.grid;
  for (unsigned int z = 0; z < g.z; ++z) {
    for (unsigned int y = 0; y < g.y; ++y) {
      for (unsigned int x = 0; x < g.x; ++x) {
        std::string report = run_block(Dim3(x, y, z));
        if (!report.empty()) return report;
      }
    }
  }
  return "";
}

void fault(const std::string& what) {
  if (runner.running == nullptr) throw HostFault{what};
  std::snprintf(runner.fault_text, sizeof(runner.fault_text), "%s", what.c_str());
  runner.faulted = true;
  // The fiber is abandoned: its stack is reused by the next block.
  switch_fiber(runner.running->context, runner.scheduler);
  __builtin_unreachable();
}

void syncthreads() {
  park(FiberState::kAtBarrier);
}

uint64_t warp_exchange_xor(uint64_t bits, int lane_mask, int width) {
  Fiber& fiber = *runner.running;
  const int lanes = warp_size();
  if (width <= 0 || width > lanes || (width & (width - 1)) != 0) {
    fault("warp shuffle of width " + std::to_string(width) +
          ", which is not a power of two up to the warp's " + std::to_string(lanes) + " lanes");
  }
  if (lane_mask < 0 || lane_mask >= width) {
    // CUDA and HIP then read from another group or the lane itself; no kernel means that.
    fault("warp shuffle xor " + std::to_string(lane_mask) + " reaches outside its group of " +
          std::to_string(width) + " lanes");
  }
  std::vector<uint64_t>& slots = runner.exchange[fiber.shuffles & 1][fiber.warp];
  slots[fiber.lane] = bits;
  park(FiberState::kAtShuffle);
  int source = fiber.lane ^ lane_mask;
  // A partial last warp: lanes past the block's end hold nothing, so the lane keeps its value.
  const size_t warp_first = static_cast<size_t>(fiber.warp) * static_cast<size_t>(lanes);
  if (warp_first + static_cast<size_t>(source) >= runner.fibers.size()) source = fiber.lane;
  ++fiber.shuffles;
  return slots[source];
}

void* shared_array(size_t bytes) {
  Fiber& fiber = *runner.running;
  const size_t index = fiber.shared_declared++;
  if (index < runner.shared_arrays.size()) {
    const SharedArray& array = runner.shared_arrays[index];
    if (array.bytes != bytes) {
      fault("declares its shared arrays in another order than thread 0 of the block");
    }
    return runner.arena + array.offset;
  }
  const size_t offset = (runner.arena_used + 15) / 16 * 16;
  runner.shared_total += bytes;
  const size_t limit = dynamic_shared_limit(runner.grid->config.kernel);
  if (runner.shared_total > limit || offset + bytes + kRedZone > kSharedArenaBytes) {
    fault("the block's static and dynamic shared memory (" + std::to_string(runner.shared_total) +
          " bytes) exceeds the kernel's " + std::to_string(limit));
  }
  DeviceMemory::instance().mark(runner.arena + offset, bytes, Shadow::kUninitialized);
  runner.arena_used = offset + bytes + kRedZone;
  runner.shared_arrays.push_back(SharedArray{offset, bytes});
  return runner.arena + offset;
}

std::string describe_shared(const void* ptr) {
  const auto* p = static_cast<const std::byte*>(ptr);
  if (runner.arena == nullptr || p < runner.arena || p >= runner.arena + kSharedArenaBytes) {
    return "";
  }
  const auto offset = static_cast<size_t>(p - runner.arena);
  const size_t dynamic = runner.grid->config.shared_bytes;
  std::string name = "dynamic shared memory (" + std::to_string(dynamic) + " bytes)";
  size_t start = 0, bytes = dynamic;
  for (size_t i = 0; i < runner.shared_arrays.size(); ++i) {
    if (runner.shared_arrays[i].offset > offset) break;
    start = runner.shared_arrays[i].offset;
    bytes = runner.shared_arrays[i].bytes;
    name = "shared array " + std::to_string(i) + " (" + std::to_string(bytes) + " bytes)";
  }
  if (offset < start + bytes) return "byte " + std::to_string(offset - start) + " of " + name;
  return std::to_string(offset - start - bytes) + " bytes past the end of " + name;
}

void* dynamic_shared_memory() {
  return runner.arena;
}

}  // namespace gpusim
