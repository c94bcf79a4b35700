# tests/gpu/access.cmake: the access analysis and `sgcap check` on real
# captures (tests/gpu/access_gpu.sh; issue 11): access_cases (the GPU cases
# no sample has: a side-stream sink, VA reuse, three planted hazards) is
# built here with the CUDA language; the test runs on the GPU machine.
if(NOT TARGET sgcap)
  return()
endif()
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(NOT CMAKE_CUDA_COMPILER)
  return()
endif()
enable_language(CUDA)
add_executable(access_cases ${CMAKE_CURRENT_LIST_DIR}/access/access_cases.cu)
set_target_properties(access_cases PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/gpu
  CUDA_ARCHITECTURES 90
  CUDA_RUNTIME_LIBRARY Static)
add_test(NAME gpu.access
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/access_gpu.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_BINARY_DIR}/gpu-access)
set_tests_properties(gpu.access PROPERTIES LABELS "gpu" TIMEOUT 1800)
