# scripts.setup: scripts/setup.sh installs only what is missing, with
# stand-ins for dpkg, apt-get and python3 (nothing is installed). CPU only.
add_test(NAME scripts.setup
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/setup_check.sh ${PROJECT_BINARY_DIR}/setup-check)
set_tests_properties(scripts.setup PROPERTIES LABELS "cpu;scripts" TIMEOUT 60)
