# tests/gpu/inject.cmake: GPU checks of inject/ (label "gpu"), one per built
# sample variant plus the PyTorch and CuPy scripts, each through
# inject_check.sh (same exit code and stdout with and without libsgcap, and a
# trace that shows the captures, events, waits and launches the sample's
# expected topology makes).
# On a moved build tree, run tests/gpu/inject_gpu.sh BUILD_DIR instead.
if(NOT TARGET sgcap_shim)
  return()
endif()
set(inject_check ${CMAKE_CURRENT_LIST_DIR}/inject_check.sh)
get_property(inject_sample_targets GLOBAL PROPERTY SGCAP_SAMPLE_TARGETS)
foreach(tgt IN LISTS inject_sample_targets)
  get_target_property(bin ${tgt} OUTPUT_NAME)
  string(REGEX REPLACE "_(shared|ptds)$" "" name ${bin})
  # what the trace must show comes from the sample's expected topology
  set(expect 2)
  set(topo ${PROJECT_SOURCE_DIR}/samples/expected/${name}.topo)
  if(EXISTS ${topo})
    set(expect ${topo})
  endif()
  set(args "")
  if(name STREQUAL "recapture")
    set(args --iters 3)
  endif()
  add_test(NAME gpu.inject.${bin}
           COMMAND bash ${inject_check} $<TARGET_FILE:sgcap_shim> ${expect} --
                   $<TARGET_FILE:${tgt}> ${args})
  set_tests_properties(gpu.inject.${bin} PROPERTIES LABELS "gpu;inject" TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endforeach()
foreach(script torch_two_stream cupy_fork_join)
  add_test(NAME gpu.inject.${script}
           COMMAND bash ${inject_check} $<TARGET_FILE:sgcap_shim> 2 --
                   python3 ${CMAKE_CURRENT_LIST_DIR}/${script}.py)
  set_tests_properties(gpu.inject.${script} PROPERTIES LABELS "gpu;inject" TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endforeach()
