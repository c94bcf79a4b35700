# tests/golden/golden.cmake: golden tests of the hand-written fixture bundles
# (included by tests/CMakeLists.txt). One ctest per tests/golden/NAME.sgraph:
# golden_check reads it, compares the canonical dump with NAME.dump, checks
# read -> write -> read, JSON and clone round trips, and renders the DOT with
# Graphviz. To regenerate the expected dumps after an intended change:
#   SGCAP_GOLDEN_UPDATE=1 ctest --test-dir build -L golden   # then review git diff
set(SGCAP_GOLDEN_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(golden_check ${SGCAP_GOLDEN_DIR}/golden_check.c)
sgcap_target_defaults(golden_check)
target_include_directories(golden_check PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(golden_check PRIVATE sgcap_graph)

file(GLOB SGCAP_GOLDEN_BUNDLES LIST_DIRECTORIES true CONFIGURE_DEPENDS
     ${SGCAP_GOLDEN_DIR}/*.sgraph)
foreach(bundle ${SGCAP_GOLDEN_BUNDLES})
  get_filename_component(name ${bundle} NAME)
  string(REGEX REPLACE "\\.sgraph$" "" name ${name})
  add_test(NAME golden.${name}
           COMMAND golden_check ${bundle} ${SGCAP_GOLDEN_DIR}/${name}.dump)
  # 77: everything passed but graphviz is missing, so the DOT was not rendered
  set_tests_properties(golden.${name} PROPERTIES LABELS "cpu;golden" TIMEOUT 120
                       SKIP_RETURN_CODE 77)
endforeach()

# The fixtures are authored with make_fixtures.py; keep script and files in step.
find_program(SGCAP_PYTHON3 python3)
if(SGCAP_PYTHON3)
  add_test(NAME golden.fixtures_reproducible
           COMMAND ${SGCAP_PYTHON3} ${SGCAP_GOLDEN_DIR}/make_fixtures.py --check)
  set_tests_properties(golden.fixtures_reproducible PROPERTIES LABELS "cpu;golden" TIMEOUT 60)
endif()
