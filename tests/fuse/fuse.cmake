# tests/fuse/fuse.cmake: the fuse pass through the CLI (tests/fuse/fuse_cli.sh);
# included by tests/CMakeLists.txt. Skipped (77) where NVRTC is missing.
if(TARGET sgcap)
  add_test(NAME cpu.fuse.cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/fuse_cli.sh ${PROJECT_BINARY_DIR}
                                     ${PROJECT_SOURCE_DIR})
  set_tests_properties(cpu.fuse.cli PROPERTIES LABELS "cpu" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
