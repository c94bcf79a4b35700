# tests/gpu/capture.cmake: GPU tests of capture/ (label "gpu"): every sample
# binary under `sgcap run`, its bundles compared with its --expect topology
# by topo_compare (built here; its logic, tests/support/topo.c, is
# unit-tested on the CPU); the recapture sample for bounded memory and bundle
# count; the PyTorch and CuPy scripts for two or more streams with event
# edges; inspect and dot on every bundle. On a moved build tree run
# tests/gpu/capture_gpu.sh BUILD_DIR instead (no ctest, no absolute paths).
add_executable(topo_compare ${CMAKE_CURRENT_LIST_DIR}/topo_compare.c)
sgcap_target_defaults(topo_compare)
target_include_directories(topo_compare PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(topo_compare PRIVATE sgcap_test_support sgcap_graph)

if(NOT TARGET sgcap_shim OR NOT TARGET sgcap)
  return()
endif()
set(capture_gpu ${CMAKE_CURRENT_LIST_DIR}/capture_gpu.sh)
get_property(capture_sample_targets GLOBAL PROPERTY SGCAP_SAMPLE_TARGETS)
foreach(tgt IN LISTS capture_sample_targets)
  get_target_property(bin ${tgt} OUTPUT_NAME)
  add_test(NAME gpu.capture.${bin}
           COMMAND bash ${capture_gpu} ${CMAKE_BINARY_DIR} --only ${bin})
  set_tests_properties(gpu.capture.${bin} PROPERTIES LABELS "gpu;capture" TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endforeach()
foreach(check recapture_bounded torch_two_stream cupy_fork_join torch_compile_streams
              torch_graphed_callables torch_shared_input jax_jit cupy_elementwise)
  add_test(NAME gpu.capture.${check}
           COMMAND bash ${capture_gpu} ${CMAKE_BINARY_DIR} --only ${check})
  set_tests_properties(gpu.capture.${check} PROPERTIES LABELS "gpu;capture" TIMEOUT 900
                       SKIP_RETURN_CODE 77)
endforeach()

# End to end per program (tests/gpu/e2e_replay.sh): capture with snapshots,
# check, inspect --code and replay --validate every bundle of every sample
# and framework script; and the coverage run (tests/gpu/coverage_gpu.sh):
# every graph shape and framework recorded, outputs unchanged, each bundle
# replayed bit-exact or in-process only with its reason, and the benchmarks.
add_test(NAME gpu.e2e_replay
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e_replay.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_BINARY_DIR}/gpu-e2e)
set_tests_properties(gpu.e2e_replay PROPERTIES LABELS "gpu;capture;replay" TIMEOUT 1800
                     SKIP_RETURN_CODE 77)
add_test(NAME gpu.coverage
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/coverage_gpu.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_BINARY_DIR}/gpu-coverage)
set_tests_properties(gpu.coverage PROPERTIES LABELS "gpu;capture;replay" TIMEOUT 900
                     SKIP_RETURN_CODE 77)
