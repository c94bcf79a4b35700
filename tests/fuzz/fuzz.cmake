# fuzz.cmake: libFuzzer targets, built into ${CMAKE_BINARY_DIR}/fuzz/ as part
# of ALL when SGCAP_BUILD_FUZZ is ON. libFuzzer needs clang while the project
# builds with gcc, so each target is one clang command (sources of the code
# under test compiled in, with ASan and UBSan) rather than a CMake target of
# ours. scripts/test.sh runs every fuzz/fuzz_* for SGCAP_FUZZ_SECONDS with the
# seeds in tests/fuzz/seeds/<name>/. A new target is one sgcap_add_fuzzer line.
if(NOT SGCAP_BUILD_FUZZ)
  return()
endif()
find_program(SGCAP_CLANG NAMES clang clang-18 clang-17 clang-16 clang-15 clang-14)
if(NOT SGCAP_CLANG)
  message(WARNING "SGCAP_BUILD_FUZZ is ON but clang was not found: no fuzz targets")
  return()
endif()

# sgcap_add_fuzzer(NAME SOURCES file... [INCLUDES dir...] [LIBS name...])
# Sources are paths relative to the project root; LIBS are -l names.
function(sgcap_add_fuzzer name)
  cmake_parse_arguments(F "" "" "SOURCES;INCLUDES;LIBS" ${ARGN})
  set(out ${CMAKE_BINARY_DIR}/fuzz/${name})
  set(srcs)
  set(deps)
  foreach(s ${F_SOURCES})
    list(APPEND srcs ${PROJECT_SOURCE_DIR}/${s})
    # the compile depends on the headers beside each source, too
    get_filename_component(dir ${PROJECT_SOURCE_DIR}/${s} DIRECTORY)
    file(GLOB headers CONFIGURE_DEPENDS ${dir}/*.h)
    list(APPEND deps ${headers})
  endforeach()
  set(flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1
            -std=gnu11 -D_GNU_SOURCE=1 -DHASH_NONFATAL_OOM=1 -DHASH_FUNCTION=HASH_FNV -DSGCAP_VERSION="${PROJECT_VERSION}"
            -I${PROJECT_SOURCE_DIR})
  foreach(i ${F_INCLUDES} ${UTHASH_INCLUDE_DIR} ${JANSSON_INCLUDE_DIRS} ${ZSTD_INCLUDE_DIRS}
          ${XXHASH_INCLUDE_DIRS} ${LZ4_INCLUDE_DIRS})
    list(APPEND flags -I${i})
  endforeach()
  set(libs)
  foreach(d ${JANSSON_LIBRARY_DIRS} ${ZSTD_LIBRARY_DIRS} ${XXHASH_LIBRARY_DIRS}
          ${LZ4_LIBRARY_DIRS})
    list(APPEND libs -L${d})
  endforeach()
  foreach(l ${F_LIBS})
    list(APPEND libs -l${l})
  endforeach()
  list(REMOVE_DUPLICATES deps)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/fuzz
    COMMAND ${SGCAP_CLANG} ${flags} ${srcs} -o ${out} ${libs} -lstdc++ -lm
    DEPENDS ${srcs} ${deps}
    COMMENT "clang libFuzzer: fuzz/${name}"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${out})
endfunction()

file(GLOB sgcap_fuzz_graph_sources RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/graph/*.c)

sgcap_add_fuzzer(fuzz_bundle SOURCES tests/fuzz/fuzz_bundle.c ${sgcap_fuzz_graph_sources}
                 LIBS jansson zstd xxhash)
sgcap_add_fuzzer(fuzz_fatbin
                 SOURCES tests/fuzz/fuzz_fatbin.c code/fatbin.c code/elf_image.c
                         ${sgcap_fuzz_graph_sources}
                 INCLUDES ${CUDAToolkit_INCLUDE_DIRS} LIBS jansson zstd xxhash lz4)
sgcap_add_fuzzer(fuzz_sass
                 SOURCES tests/fuzz/fuzz_sass.c code/sass_text.c code/sass_flow.c code/sass.c
                         code/sass_poly.c code/sass_loop.c code/sass_div.c code/sass_uniq.c
                         code/sass_icache.c code/sass_facts.c
                         code/fatbin.c code/elf_image.c ${sgcap_fuzz_graph_sources}
                 INCLUDES ${CUDAToolkit_INCLUDE_DIRS} LIBS jansson zstd xxhash lz4)
sgcap_add_fuzzer(fuzz_icache
                 SOURCES tests/fuzz/fuzz_icache.c code/sass_icache.c code/sass_uniq.c
                         code/sass_text.c code/sass_facts.c code/sass_flow.c code/sass.c
                         code/sass_poly.c code/sass_loop.c code/sass_div.c code/fatbin.c
                         code/elf_image.c ${sgcap_fuzz_graph_sources}
                 INCLUDES ${CUDAToolkit_INCLUDE_DIRS} LIBS jansson zstd xxhash lz4)
file(GLOB sgcap_fuzz_ptx_sources RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/code/ptx*.c ${PROJECT_SOURCE_DIR}/code/access*.c)
# the analysis itself, not its entry point from a bundle (which needs the
# code report, fatbins, nvdisasm's cache: none of it is fuzzed here)
list(FILTER sgcap_fuzz_ptx_sources EXCLUDE REGEX "access_bundle\\.c$")
sgcap_add_fuzzer(fuzz_ptx SOURCES tests/fuzz/fuzz_ptx.c ${sgcap_fuzz_ptx_sources}
                 ${sgcap_fuzz_graph_sources} LIBS jansson zstd xxhash)
sgcap_add_fuzzer(fuzz_lift
                 SOURCES tests/fuzz/fuzz_lift.c ${sgcap_fuzz_ptx_sources} code/fatbin.c
                         code/elf_image.c rewrite/fuse_stage.c rewrite/fuse_plan.c
                         rewrite/fuse_gen.c rewrite/common.c rewrite/json_writer.c rewrite/reach.c
                         ${sgcap_fuzz_graph_sources}
                 INCLUDES ${CUDAToolkit_INCLUDE_DIRS} LIBS jansson zstd xxhash lz4)
sgcap_add_fuzzer(fuzz_mangled SOURCES tests/fuzz/fuzz_mangled.c graph/mangled.c)
