# sass.cmake: the SASS analysis through the real nvdisasm (test_sass
# --nvdisasm): the committed cubins of every arch against their expected
# facts, and the cache. Skipped (exit 77) when no nvdisasm is found; the
# parser and dataflow tests on committed listings run in unit.test_sass.
add_test(NAME sass.nvdisasm COMMAND test_sass --nvdisasm)
set_tests_properties(sass.nvdisasm PROPERTIES LABELS "unit;cpu" SKIP_RETURN_CODE 77 TIMEOUT 600)
