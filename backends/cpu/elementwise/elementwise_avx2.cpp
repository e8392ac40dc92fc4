// The row kernels at the avx2 level.

#include "backends/cpu/elementwise/elementwise_kernel.h"
#include "backends/cpu/simd/simd_avx2.h"

namespace baton::cpu {

const RowKernels kRowKernelsAvx2 = RowKernelsFor<SimdAvx2>::table();

}  // namespace baton::cpu
