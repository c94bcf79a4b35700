# tests/gpu/nccl.cmake: the project's own NCCL workload (issue 15), built
# when nccl.h and libnccl are found (the CUDA toolkit here; on the GPU
# machine the nvidia-nccl-cu13 package provides libnccl.so.2 at run time:
# tests/gpu/nccl_gpu.sh finds it). Not registered with ctest: it needs a GPU
# and the NCCL runtime, and runs from nccl_gpu.sh.
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
