// The row kernels at the avx512 level.

#include "backends/cpu/elementwise/elementwise_kernel.h"
#include "backends/cpu/simd/simd_avx512.h"

namespace baton::cpu {

const RowKernels kRowKernelsAvx512 = RowKernelsFor<SimdAvx512>::table();

}  // namespace baton::cpu
