# tests/gpu/optimize.cmake: the in-app optimizer on a GPU (label "gpu"):
# tests/gpu/optimize_gpu.sh runs every sample, the PyTorch and CuPy
# programs plain, under SGCAP_MODE=optimize, forced and with a planted wrong
# result, and the exec_update sample's decisions. On a moved build tree run
# it directly: tests/gpu/optimize_gpu.sh BUILD_DIR OUT_DIR.
if(NOT TARGET sgcap_shim OR NOT TARGET sgcap)
  return()
endif()
add_test(NAME gpu.optimize
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/optimize_gpu.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_BINARY_DIR}/tests/gpu/optimize-out)
set_tests_properties(gpu.optimize PROPERTIES LABELS "gpu;optimize" TIMEOUT 900 SKIP_RETURN_CODE 77)
