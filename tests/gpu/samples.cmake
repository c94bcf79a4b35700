# tests/gpu/samples.cmake: ctest entries for samples/ (docs/SAMPLES.md).
#   gpu.sample.<binary>         runs the sample; it checks itself (exit 0 = the
#                               captured topology and every replayed result
#                               match); needs a GPU, label "gpu"
#   cpu.sample.<binary>.expect  --expect: exit 0, format v1; label "cpu"
#   cpu.sample.<binary>.help    --help: exit 0, usage line; label "cpu"
#   cpu.sample.<binary>.golden  --expect equals samples/expected/<name>.topo
#                               (recapture with --iters 3); label "cpu"
# One set per built variant (<name>, <name>_shared, <name>_ptds, driver_api).
get_property(sgcap_sample_targets GLOBAL PROPERTY SGCAP_SAMPLE_TARGETS)
foreach(tgt IN LISTS sgcap_sample_targets)
  get_target_property(bin ${tgt} OUTPUT_NAME)
  add_test(NAME gpu.sample.${bin} COMMAND $<TARGET_FILE:${tgt}>)
  set_tests_properties(gpu.sample.${bin} PROPERTIES LABELS "gpu" TIMEOUT 120)
  string(REGEX REPLACE "_(shared|ptds)$" "" name ${bin})
  set(golden ${PROJECT_SOURCE_DIR}/samples/expected/${name}.topo)
  set(golden_args "")
  if(name STREQUAL "recapture")
    set(golden_args "--iters;3")
  endif()
  foreach(mode expect help golden)
    add_test(NAME cpu.sample.${bin}.${mode}
             COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:${tgt}> -DMODE=${mode}
                     -DGOLDEN=${golden} "-DARGS=${golden_args}"
                     -P ${PROJECT_SOURCE_DIR}/samples/check_cli.cmake)
    set_tests_properties(cpu.sample.${bin}.${mode} PROPERTIES LABELS "cpu" TIMEOUT 60)
    if(tgt STREQUAL "sample_driver_api")
      # No driver here, perhaps: load the toolkit's stub libcuda, never called.
      set_tests_properties(cpu.sample.${bin}.${mode} PROPERTIES
                           ENVIRONMENT "LD_LIBRARY_PATH=${SGCAP_SAMPLES_STUB_DIR}")
    endif()
  endforeach()
endforeach()
