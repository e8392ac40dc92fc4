// The row kernels at the generic level.

#include "backends/cpu/elementwise/elementwise_kernel.h"
#include "backends/cpu/simd/simd_generic.h"

namespace baton::cpu {

const RowKernels kRowKernelsGeneric = RowKernelsFor<SimdGeneric>::table();

}  // namespace baton::cpu
