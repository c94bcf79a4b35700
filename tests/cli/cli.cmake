# tests/cli/cli.cmake: the `sgcap` command end to end on crafted bundles
# (included by tests/CMakeLists.txt). One ctest per behaviour, cli.STEP,
# each a step of tests/cli/cli_test.sh: hostile strings never reach the
# terminal raw (escape), write errors on stdout fail the command
# (write_errors), `dot` picks its format from the output name (dot_format),
# survives a 64 KiB kernel name (dot_long_name), folds big graphs
# (dot_fold), leaves nothing behind when interrupted (dot_signal),
# `run --out --` is refused (run_dashdash), and NCCL kernels and comm
# streams are labelled, replay refusing them with the reason (nccl).
if(TARGET sgcap)
  foreach(step escape write_errors dot_format dot_long_name dot_fold dot_signal run_dashdash nccl)
    add_test(NAME cli.${step}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_test.sh ${step} $<TARGET_FILE:sgcap>
                     ${PROJECT_SOURCE_DIR}/tests/golden ${CMAKE_BINARY_DIR}/cli-test/${step})
    set_tests_properties(cli.${step} PROPERTIES LABELS "cpu;cli" TIMEOUT 120 SKIP_RETURN_CODE 77)
  endforeach()
endif()
