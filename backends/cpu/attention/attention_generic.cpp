// The attention kernel at the generic level.

#include "backends/cpu/attention/attention_kernel.h"
#include "backends/cpu/simd/simd_generic.h"

namespace baton::cpu::attn {

void run_generic(const Context& ctx, const Args& args, const Plan& plan) {
  run<SimdGeneric>(ctx, args, plan);
}

}  // namespace baton::cpu::attn
