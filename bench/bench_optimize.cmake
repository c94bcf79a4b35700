# bench_optimize: the in-app optimizer's costs when it has nothing to gain
# (bench_optimize.sh runs it plain, under capture and under optimize, side
# by side, and the fusion benchmark's graph end to end). Static cudart.
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  add_executable(bench_optimize ${CMAKE_CURRENT_LIST_DIR}/bench_optimize.cu)
  set_target_properties(bench_optimize PROPERTIES
    OUTPUT_NAME bench_optimize
    RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR}
    CUDA_ARCHITECTURES 90
    CUDA_RUNTIME_LIBRARY Static)
endif()
