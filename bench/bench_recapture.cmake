# bench_recapture: a program that re-captures and updates its exec thousands
# of times, timed in its loop and as a whole (bench_recapture.cu, run with
# and without libsgcap side by side by bench_recapture.sh on the GPU).
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  add_executable(bench_recapture ${CMAKE_CURRENT_LIST_DIR}/bench_recapture.cu)
  set_target_properties(bench_recapture PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR}
    CUDA_ARCHITECTURES 90
    CUDA_RUNTIME_LIBRARY Static)
endif()
