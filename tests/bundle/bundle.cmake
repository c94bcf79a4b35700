# tests/bundle/bundle.cmake: the bundle reader and writer through the CLI
# (included by tests/CMakeLists.txt): bundle.cli runs cli/bundle_cli.cmake, the
# findings of issue 16 about reading and writing bundles, each checked on
# `sgcap` as a user runs it. The race of finding 1 is made deterministic by
# swap_on_open.c, loaded with LD_PRELOAD.
if(NOT TARGET sgcap OR NOT TARGET sgcap_rewrite)
  return()
endif()
add_library(sgcap_test_swap_on_open MODULE ${CMAKE_CURRENT_LIST_DIR}/swap_on_open.c)
target_link_libraries(sgcap_test_swap_on_open PRIVATE dl)
add_test(NAME bundle.cli
         COMMAND ${CMAKE_COMMAND} -DSGCAP=$<TARGET_FILE:sgcap>
                 -DSWAP=$<TARGET_FILE:sgcap_test_swap_on_open>
                 -DSAMPLE=${PROJECT_SOURCE_DIR}/samples/bundles/fork_join.sgraph
                 -DOUT=${CMAKE_BINARY_DIR}/bundle-cli -DDOCS=${PROJECT_SOURCE_DIR}/docs
                 -P ${CMAKE_CURRENT_LIST_DIR}/cli/bundle_cli.cmake)
set_tests_properties(bundle.cli PROPERTIES LABELS "cpu" TIMEOUT 120)

# What writing a bundle links: no reader, no parser, no JSON library.
add_executable(bundle_writer_only ${CMAKE_CURRENT_LIST_DIR}/writer_only.c)
sgcap_target_defaults(bundle_writer_only)
target_include_directories(bundle_writer_only PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(bundle_writer_only PRIVATE sgcap_graph)
find_program(SGCAP_NM nm)
if(SGCAP_NM)
  add_test(NAME bundle.writer_links_no_reader
           COMMAND ${CMAKE_COMMAND} -DNM=${SGCAP_NM} -DBIN=$<TARGET_FILE:bundle_writer_only>
                   -DOUT=${CMAKE_BINARY_DIR}/bundle-writer-only.sgraph
                   -P ${CMAKE_CURRENT_LIST_DIR}/cli/writer_links.cmake)
  set_tests_properties(bundle.writer_links_no_reader PROPERTIES LABELS "cpu" TIMEOUT 60)
endif()
