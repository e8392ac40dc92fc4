#include "backends/gpusim/fiber_switch.h"

#include <cstdint>

namespace gpusim {

#if defined(__x86_64__)

// gpusim_switch_stack(save, load): pushes the System V callee-saved registers, MXCSR and the
// x87 control word, stores the stack pointer in *save, loads `load` and pops the same from it.
// gpusim_fiber_start is where a new fiber's first switch returns to: it calls entry(argument),
// which prepare_fiber left in r13 and r12.
asm(R"(
  .pushsection .text
  .globl gpusim_switch_stack
  .hidden gpusim_switch_stack
  .type gpusim_switch_stack, @function
gpusim_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr (%rsp)
  fnstcw 8(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size gpusim_switch_stack, .-gpusim_switch_stack

  .globl gpusim_fiber_start
  .hidden gpusim_fiber_start
  .type gpusim_fiber_start, @function
gpusim_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size gpusim_fiber_start, .-gpusim_fiber_start
  .popsection
)");

extern "C" void gpusim_switch_stack(void** save, void* load);
extern "C" void gpusim_fiber_start();

void prepare_fiber(FiberContext& fiber, void* stack, size_t bytes, void (*entry)(void*),
                   void* argument) {
  // The return address sits just below a 16-byte aligned top, so gpusim_fiber_start's call is
  // made with the stack aligned as the ABI wants.
  const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t{15};
  auto* slot = reinterpret_cast<uint64_t*>(top);
  *--slot = reinterpret_cast<uint64_t>(&gpusim_fiber_start);
  *--slot = 0;                                     // rbp
  *--slot = 0;                                     // rbx
  *--slot = reinterpret_cast<uint64_t>(argument);  // r12
  *--slot = reinterpret_cast<uint64_t>(entry);     // r13
  *--slot = 0;                                     // r14
  *--slot = 0;                                     // r15
  *--slot = 0x037f;                                // x87 control word: the default
  *--slot = 0x1f80;                                // MXCSR: the default, exceptions masked
  fiber.stack_pointer = slot;
}

void switch_fiber(FiberContext& from, FiberContext& to) {
  gpusim_switch_stack(&from.stack_pointer, to.stack_pointer);
}

#else

namespace {
// The fiber a switch is about to start; makecontext passes no pointer portably.
thread_local FiberContext* starting = nullptr;
void start_trampoline() {
  FiberContext* fiber = starting;
  fiber->entry(fiber->argument);
}
}  // namespace

void prepare_fiber(FiberContext& fiber, void* stack, size_t bytes, void (*entry)(void*),
                   void* argument) {
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = bytes;
  fiber.context.uc_link = nullptr;
  fiber.entry = entry;
  fiber.argument = argument;
  makecontext(&fiber.context, start_trampoline, 0);
}

void switch_fiber(FiberContext& from, FiberContext& to) {
  starting = &to;
  swapcontext(&from.context, &to.context);
}

#endif

}  // namespace gpusim
