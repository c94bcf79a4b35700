# tests/optimize/optimize.cmake: the in-app optimizer end to end on the CPU
# (label cpu): optimize_probe, a driver-API program linked with the fake
# libcuda.so.1 of tests/capture (FAKE_CUDA_EXECUTE=1: its graphs really
# compute on the CPU), runs its scenarios under `sgcap run --optimize`;
# optimize_cpu.sh checks every result and the optimizer's decisions.
if(NOT TARGET sgcap_shim OR NOT TARGET sgcap OR NOT TARGET capture_fake_cuda)
  return()
endif()
set(SGCAP_OPTIMIZE_TEST_DIR ${CMAKE_BINARY_DIR}/tests/optimize)
add_executable(optimize_probe ${CMAKE_CURRENT_LIST_DIR}/optimize_probe.c)
set_target_properties(optimize_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_OPTIMIZE_TEST_DIR})
target_include_directories(optimize_probe PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(optimize_probe PRIVATE capture_fake_cuda m)
add_test(NAME optimize.cpu_end_to_end
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/optimize_cpu.sh $<TARGET_FILE:sgcap>
                 $<TARGET_FILE:optimize_probe> ${CMAKE_BINARY_DIR}/tests/capture/fake
                 ${SGCAP_OPTIMIZE_TEST_DIR}/work)
set_tests_properties(optimize.cpu_end_to_end PROPERTIES LABELS "cpu;optimize" TIMEOUT 300)
