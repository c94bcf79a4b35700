# tests/layout/layout.cmake: the include rules of docs/ARCHITECTURE.md,
# checked on every source file (label cpu). check_includes.py reads the
# rules from the document itself.
find_program(SGCAP_PYTHON3_LAYOUT python3)
if(NOT SGCAP_PYTHON3_LAYOUT)
  message(FATAL_ERROR "tests/layout: python3 not found (scripts/setup.sh installs it)")
endif()
add_test(NAME layout.includes
         COMMAND ${SGCAP_PYTHON3_LAYOUT} ${CMAKE_CURRENT_LIST_DIR}/check_includes.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(layout.includes PROPERTIES LABELS "cpu;layout" TIMEOUT 60)
