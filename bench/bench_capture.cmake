# bench_capture: capture cost per node with and without libsgcap at 1k and
# 10k nodes (bench_capture.cu, run by bench_capture.sh on the GPU), and
# bench_bundle_write: digest, bundle write and snapshot rewrite throughput
# on the CPU. Run: bench/bench_capture.sh BUILD_DIR
add_executable(bench_bundle_write ${CMAKE_CURRENT_LIST_DIR}/bench_bundle_write.c)
sgcap_target_defaults(bench_bundle_write)
target_include_directories(bench_bundle_write PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(bench_bundle_write PRIVATE sgcap_capture sgcap_graph)
set_target_properties(bench_bundle_write PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR})
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  add_executable(bench_capture ${CMAKE_CURRENT_LIST_DIR}/bench_capture.cu)
  set_target_properties(bench_capture PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR}
    CUDA_ARCHITECTURES 90
    CUDA_RUNTIME_LIBRARY Static)
endif()
