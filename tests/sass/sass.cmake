# sass.cmake: the SASS analysis through the real nvdisasm (test_sass
# --nvdisasm): the committed cubins of every arch against their expected
# facts, and the cache. Skipped (exit 77) when no nvdisasm is found; the
# parser and dataflow tests on committed listings run in unit.test_sass.
add_test(NAME sass.nvdisasm COMMAND test_sass --nvdisasm)
set_tests_properties(sass.nvdisasm PROPERTIES LABELS "unit;cpu" SKIP_RETURN_CODE 77 TIMEOUT 600)
# tools/sass_dump (what the GPU machine runs, without cmocka): its fixture
# check through the real nvdisasm, its facts of the committed listings, bad
# input. Exit 77 = the nvdisasm part skipped.
if(TARGET sass_dump)
  add_test(NAME sass.dump_tool
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sass_dump_cpu.sh $<TARGET_FILE:sass_dump>
                   ${PROJECT_SOURCE_DIR}/tests/data/sass ${CMAKE_BINARY_DIR}/tests/sass_dump)
  set_tests_properties(sass.dump_tool PROPERTIES LABELS "cpu" SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
