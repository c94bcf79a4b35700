# cmake/install.cmake: `cmake --install BUILD [--prefix DIR]` lays sgcap out
# as the build tree is laid out, so both run the same way:
#   bin/sgcap             the command
#   lib/libsgcap.so       the shim (`sgcap run` looks for it in ../lib
#                         beside the command; LD_PRELOAD=DIR/lib/libsgcap.so)
#   share/doc/sgcap/      README.md and docs/*.md
# The command links sgcap's own libraries statically and the system's
# (jansson, zstd, lz4, xxhash) dynamically: nothing else to install. CUPTI
# (replay --profile) is not installed: replay finds the toolkit's copy in
# /usr/local/cuda; the build tree's copy in lib/ is for carried build trees.
# Included at the end of the top-level CMakeLists.txt, after every target.
if(TARGET sgcap)
  install(TARGETS sgcap RUNTIME DESTINATION bin)
endif()
if(TARGET sgcap_shim)
  install(TARGETS sgcap_shim LIBRARY DESTINATION lib)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/sgcap)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/sgcap/docs
  FILES_MATCHING PATTERN "*.md"
  PATTERN "gpu-runs" EXCLUDE)
