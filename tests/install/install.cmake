# install.layout: `cmake --install` gives a prefix from which the installed
# command runs (cmake/install.cmake). CPU only.
if(TARGET sgcap AND TARGET sgcap_shim)
  add_test(NAME install.layout
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/install_check.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_BINARY_DIR}/install-check)
  set_tests_properties(install.layout PROPERTIES LABELS "cpu;install" TIMEOUT 120)
endif()
