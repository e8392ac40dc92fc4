// The attention kernel at the avx2 level.

#include "backends/cpu/attention/attention_kernel.h"
#include "backends/cpu/simd/simd_avx2.h"

namespace baton::cpu::attn {

void run_avx2(const Context& ctx, const Args& args, const Plan& plan) {
  run<SimdAvx2>(ctx, args, plan);
}

}  // namespace baton::cpu::attn
