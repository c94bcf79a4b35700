# fusion_chain: the workload of the fusion benchmark (fusion_bench.sh), built
# twice: for sm_90 (SASS + compute_90 PTX, like -arch=sm_90) and with nvcc's
# default target (compute_75 PTX + sm_75 SASS: the H200 JIT-compiles the
# PTX), the two PTX paths fusion must handle.
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  foreach(variant sm90 default)
    add_executable(bench_fusion_chain_${variant} ${CMAKE_CURRENT_LIST_DIR}/fusion_chain.cu)
    set_target_properties(bench_fusion_chain_${variant} PROPERTIES
      OUTPUT_NAME fusion_chain_${variant}
      RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR}
      CUDA_RUNTIME_LIBRARY Static)
    if(variant STREQUAL "sm90")
      set_target_properties(bench_fusion_chain_${variant} PROPERTIES CUDA_ARCHITECTURES 90)
    else()
      set_target_properties(bench_fusion_chain_${variant} PROPERTIES CUDA_ARCHITECTURES 75)
    endif()
  endforeach()
endif()
