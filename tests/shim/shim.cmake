# tests/shim/shim.cmake: what libsgcap.so links and exports (label cpu):
# check_linkage.sh against the list of entry points built from
# inject/hooks.def (list_exports.c). Sanitizer builds link the sanitizer
# runtimes into the shim, so the check is for normal builds only.
if(NOT TARGET sgcap_shim OR SGCAP_SANITIZE)
  return()
endif()
add_executable(shim_list_exports ${CMAKE_CURRENT_LIST_DIR}/list_exports.c)
target_include_directories(shim_list_exports PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(shim_list_exports PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${PROJECT_BINARY_DIR}/tests/shim)
add_test(NAME shim.linkage
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_linkage.sh $<TARGET_FILE:sgcap_shim>
                 $<TARGET_FILE:shim_list_exports>)
set_tests_properties(shim.linkage PROPERTIES LABELS "cpu;shim" TIMEOUT 60)
