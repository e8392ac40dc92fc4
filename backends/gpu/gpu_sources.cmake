# The sources every GPU backend plugin builds for its own runtime (gpu_runtime.h picks CUDA or
# HIP): host code, compiled as C++20, and the kernels, written against gpu_runtime.h only and
# compiled as C++17 by nvcc or hipcc. Few kernel translation units keep device compile times
# modest (hipcc compiles each for three GPU architectures).
set(BATON_GPU_HOST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/device_allocator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_error.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_executor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_probe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_support.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pinned_staging.cpp
  ${CMAKE_CURRENT_LIST_DIR}/step_metadata.cpp)
set(BATON_GPU_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/kernels/attention_decode.cu
  ${CMAKE_CURRENT_LIST_DIR}/kernels/attention_prefill.cu
  ${CMAKE_CURRENT_LIST_DIR}/kernels/pointwise_kernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/kernels/quantized_matmul.cu
  ${CMAKE_CURRENT_LIST_DIR}/kernels/row_kernels.cu
  ${CMAKE_CURRENT_LIST_DIR}/kernels/tiled_gemm.cu)
