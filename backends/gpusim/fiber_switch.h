#pragma once

// Switching between the fibers that run a block's threads. On x86-64 a few instructions save
// and restore the callee-saved registers and the stack pointer; elsewhere ucontext does it.
// ucontext's swapcontext also saves and restores the signal mask, two system calls per switch
// that took 80% of a simulated model run (perf), and a block switches fibers twice per thread at
// every barrier and warp shuffle. Boost.Context would do the same switch but costs CI 138 MB of
// Boost headers for it.

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace gpusim {

struct FiberContext {
#if defined(__x86_64__)
  void* stack_pointer = nullptr;
#else
  ucontext_t context;
  void (*entry)(void*) = nullptr;
  void* argument = nullptr;
#endif
};

// Makes `fiber` start entry(argument) on [stack, stack + bytes) when first switched to. entry
// must never return: a finished fiber switches away for good.
void prepare_fiber(FiberContext& fiber, void* stack, size_t bytes, void (*entry)(void*),
                   void* argument);
// Saves the running context in `from` and continues `to`.
void switch_fiber(FiberContext& from, FiberContext& to);

}  // namespace gpusim
