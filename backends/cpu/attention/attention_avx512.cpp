// The attention kernel at the avx512 level.

#include "backends/cpu/attention/attention_kernel.h"
#include "backends/cpu/simd/simd_avx512.h"

namespace baton::cpu::attn {

void run_avx512(const Context& ctx, const Args& args, const Plan& plan) {
  run<SimdAvx512>(ctx, args, plan);
}

}  // namespace baton::cpu::attn
