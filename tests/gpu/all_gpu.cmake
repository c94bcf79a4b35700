# tests/gpu/all_gpu.cmake: the GPU run's driver script itself, on the CPU
# (all_gpu_cpu.sh: progress lines, failure lines, logs kept when killed).
add_test(NAME cpu.all_gpu COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/all_gpu_cpu.sh ${PROJECT_BINARY_DIR}
                                  ${PROJECT_BINARY_DIR}/tests/all_gpu)
set_tests_properties(cpu.all_gpu PROPERTIES LABELS "cpu" TIMEOUT 120)
