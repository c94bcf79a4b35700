# tests/golden/rewrite.cmake: golden tests of rewrite/ (included by
# tests/CMakeLists.txt). One ctest per fixture tests/golden/NAME.sgraph,
# golden.rewrite.NAME: every pass alone and the default pipeline, report and
# resulting dump compared with tests/golden/rewrite/NAME.PASS.txt, plus a
# JSON round trip and idempotence of each; the hazard check's findings
# compared with tests/golden/rewrite/NAME.check.txt; and golden.rewrite.cli,
# `sgcap check` and `sgcap rewrite` end to end (rewrite/cli.cmake). To
# regenerate the expected files after an intended change (then review
# git diff tests/golden/rewrite):
#   SGCAP_GOLDEN_UPDATE=1 ctest --test-dir build -R golden.rewrite
if(TARGET sgcap_rewrite)
  set(SGCAP_GOLDEN_REWRITE_DIR ${CMAKE_CURRENT_LIST_DIR}/rewrite)
  add_executable(golden_rewrite ${SGCAP_GOLDEN_REWRITE_DIR}/golden_rewrite.c)
  sgcap_target_defaults(golden_rewrite)
  target_include_directories(golden_rewrite PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(golden_rewrite PRIVATE sgcap_rewrite sgcap_graph)

  file(GLOB SGCAP_REWRITE_FIXTURES LIST_DIRECTORIES true CONFIGURE_DEPENDS
       ${CMAKE_CURRENT_LIST_DIR}/*.sgraph)
  foreach(bundle ${SGCAP_REWRITE_FIXTURES})
    get_filename_component(name ${bundle} NAME)
    string(REGEX REPLACE "\\.sgraph$" "" name ${name})
    add_test(NAME golden.rewrite.${name}
             COMMAND golden_rewrite ${bundle} ${SGCAP_GOLDEN_REWRITE_DIR})
    set_tests_properties(golden.rewrite.${name} PROPERTIES LABELS "cpu;golden" TIMEOUT 120)
  endforeach()
endif()

# The CLI end to end (exit codes, bad input, nothing written on failure).
if(TARGET sgcap AND TARGET sgcap_rewrite)
  add_test(NAME golden.rewrite.cli
           COMMAND ${CMAKE_COMMAND} -DSGCAP=$<TARGET_FILE:sgcap>
                   -DFIXTURES=${CMAKE_CURRENT_LIST_DIR} -DOUT=${CMAKE_BINARY_DIR}/rewrite-cli
                   -P ${CMAKE_CURRENT_LIST_DIR}/rewrite/cli.cmake)
  set_tests_properties(golden.rewrite.cli PROPERTIES LABELS "cpu;golden" TIMEOUT 120)
endif()
