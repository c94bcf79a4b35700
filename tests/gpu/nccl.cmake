# tests/gpu/nccl.cmake: NCCL inside captured graphs (issue 15,
# docs/NCCL.md). The project's own NCCL workload, nccl_allreduce, is built
# when nccl.h and libnccl are found (the CUDA toolkit here; on the GPU
# machine the nvidia-nccl-cu13 package provides libnccl.so.2 at run time);
# gpu.nccl runs tests/gpu/nccl_gpu.sh, which finds that library and runs
# nccl_allreduce and torch_dist_allreduce.py plain and under the shim (and
# nccl-tests' all_reduce_perf when NCCL_TESTS_BUILD names a build of it).
if(TARGET sgcap)
  add_test(NAME gpu.nccl
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/nccl_gpu.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_BINARY_DIR}/gpu-nccl)
  set_tests_properties(gpu.nccl PROPERTIES LABELS "gpu;capture;replay" TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endif()
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(NOT CMAKE_CUDA_COMPILER)
  return()
endif()
enable_language(CUDA)
find_path(SGCAP_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
find_library(SGCAP_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
if(SGCAP_NCCL_INCLUDE AND SGCAP_NCCL_LIB)
  add_executable(nccl_allreduce ${CMAKE_CURRENT_LIST_DIR}/nccl/nccl_allreduce.cu)
  set_target_properties(nccl_allreduce PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/gpu
    CUDA_ARCHITECTURES 90
    CUDA_RUNTIME_LIBRARY Static)
  target_include_directories(nccl_allreduce PRIVATE ${SGCAP_NCCL_INCLUDE})
  target_link_libraries(nccl_allreduce PRIVATE ${SGCAP_NCCL_LIB})
endif()
