# launch_overhead: eager launch throughput with and without libsgcap
# (launch_overhead.sh runs both and prints the ratio). Static cudart, the
# nvcc default, so launches reach the driver through cuGetProcAddress.
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  add_executable(bench_launch_overhead ${CMAKE_CURRENT_LIST_DIR}/launch_overhead.cu)
  set_target_properties(bench_launch_overhead PROPERTIES
    OUTPUT_NAME launch_overhead
    RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR}
    CUDA_ARCHITECTURES 90
    CUDA_RUNTIME_LIBRARY Static)
endif()
