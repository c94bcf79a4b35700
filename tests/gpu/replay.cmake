# tests/gpu/replay.cmake: the tests of `sgcap replay` (docs/REPLAY.md §9).
#
# replay_make_bundle (tests/gpu/replay_make_bundle.cu, built here with the
# CUDA language) runs a real fork/join workload under stream capture and
# writes bundles with the model API, the fatbin of its own kernels and
# before/after snapshots, so replay is tested on real bundles before the
# capture shim exists. Every test is one step of tests/gpu/replay_gpu.sh,
# which also runs by hand from a carried build tree:
#   gpu.replay.make       writes the bundles (fixture for the others)
#   gpu.replay.validate   bit-exact in a fresh process, at the recorded VAs
#   gpu.replay.corrupt    a flipped bit in an after-snapshot must FAIL
#   gpu.replay.relocate   --relocate (forced fallback) validates too
#   gpu.replay.alloc      graph mem_alloc/free nodes (driver-chosen VAs)
#   gpu.replay.bench      --bench 1000
#   gpu.replay.vs         --vs: two bundles side by side, with the ratio
#   gpu.replay.profile    --profile + --trace: durations stored, one track
#                         per stream, fork branches overlap
#   gpu.replay.host       a host node: in-process only, exit 1
#   gpu.replay.fakecc     another compute capability: exit 2; --force runs
#   gpu.replay.fakegpu    another GPU model or driver: exit 2; --force runs
#   cpu.replay.cli        the CLI checks that need no GPU (label cpu)
#   cpu.replay.fake       the whole replay (placement, relocation, restore,
#                         build, validate, bench, --vs) against a pretend
#                         libcuda.so.1 that runs the kernels on the CPU
#                         (replay/fake_cuda.c, emulate.h, fake_bundle.c)
if(NOT TARGET sgcap OR NOT TARGET sgcap_replay)
  return()
endif()
set(sgcap_replay_script ${CMAKE_CURRENT_LIST_DIR}/replay_gpu.sh)
add_test(NAME cpu.replay.cli COMMAND bash ${sgcap_replay_script} ${PROJECT_BINARY_DIR} cli)
set_tests_properties(cpu.replay.cli PROPERTIES LABELS "cpu" TIMEOUT 120
                     ENVIRONMENT "SGCAP_REPLAY_OUT=${PROJECT_BINARY_DIR}/replay-cpu")

# The pretend driver and its bundle writer: plain C, no GPU, no nvcc.
add_library(replay_fake_cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/replay/fake_cuda.c)
set_target_properties(replay_fake_cuda PROPERTIES OUTPUT_NAME cuda PREFIX lib SUFFIX .so.1
                      LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/replay-fake
                      C_VISIBILITY_PRESET hidden)
target_compile_options(replay_fake_cuda PRIVATE ${SGCAP_WARNINGS})
target_include_directories(replay_fake_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS}
                           ${CMAKE_CURRENT_LIST_DIR}/replay)
target_link_libraries(replay_fake_cuda PRIVATE m)
add_executable(replay_fake_bundle ${CMAKE_CURRENT_LIST_DIR}/replay/fake_bundle.c)
sgcap_target_defaults(replay_fake_bundle)
target_include_directories(replay_fake_bundle PRIVATE ${CMAKE_CURRENT_LIST_DIR}/replay
                           ${PROJECT_SOURCE_DIR})
target_link_libraries(replay_fake_bundle PRIVATE sgcap_graph m)
add_dependencies(replay_fake_bundle replay_fake_cuda)
# A preload that takes a recorded range before main, only when the process
# runs with address randomization (the re-run without it must free it).
add_library(replay_occupy SHARED ${CMAKE_CURRENT_LIST_DIR}/replay/occupy.c)
set_target_properties(replay_occupy PROPERTIES LIBRARY_OUTPUT_DIRECTORY
                      ${PROJECT_BINARY_DIR}/tests/replay-fake)
add_dependencies(replay_fake_bundle replay_occupy)
# test_replay_driver (tests/unit) replays through this fake with its own
# driver table and context.
if(TARGET test_replay_driver)
  add_dependencies(test_replay_driver replay_fake_cuda replay_fake_bundle)
endif()
add_test(NAME cpu.replay.fake COMMAND bash ${sgcap_replay_script} ${PROJECT_BINARY_DIR} fake)
set_tests_properties(cpu.replay.fake PROPERTIES LABELS "cpu" TIMEOUT 300
                     ENVIRONMENT "SGCAP_REPLAY_OUT=${PROJECT_BINARY_DIR}/replay-cpu")

set(sgcap_replay_nvcc "${CUDAToolkit_NVCC_EXECUTABLE}")
if(NOT sgcap_replay_nvcc OR NOT EXISTS "${sgcap_replay_nvcc}")
  message(STATUS "tests/gpu/replay: nvcc not found: the replay GPU tests are not built")
  return()
endif()
if(NOT CMAKE_CUDA_COMPILER)
  set(CMAKE_CUDA_COMPILER ${sgcap_replay_nvcc})
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
enable_language(CUDA)

# The workload's code: one fatbin (sm_90 SASS + compute_90 PTX), embedded in
# the producer, which loads it and saves the same bytes in its bundles.
set(sgcap_replay_gen ${PROJECT_BINARY_DIR}/tests/replay-gen)
set(sgcap_replay_fatbin ${sgcap_replay_gen}/kernels.fatbin)
set(sgcap_replay_header ${sgcap_replay_gen}/replay_kernels_fatbin.h)
add_custom_command(
  OUTPUT ${sgcap_replay_fatbin}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${sgcap_replay_gen}
  COMMAND ${sgcap_replay_nvcc} --fatbin -gencode=arch=compute_90,code=[sm_90,compute_90]
          -o ${sgcap_replay_fatbin} ${CMAKE_CURRENT_LIST_DIR}/replay/kernels.cu
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/replay/kernels.cu
  COMMENT "tests/gpu/replay: nvcc --fatbin kernels.cu (sm_90 + compute_90)"
  VERBATIM)
add_custom_command(
  OUTPUT ${sgcap_replay_header}
  COMMAND ${CMAKE_COMMAND} -DIN=${sgcap_replay_fatbin} -DOUT=${sgcap_replay_header}
          -DNAME=replay_fatbin -P ${CMAKE_CURRENT_LIST_DIR}/replay/embed.cmake
  DEPENDS ${sgcap_replay_fatbin} ${CMAKE_CURRENT_LIST_DIR}/replay/embed.cmake
  VERBATIM)

add_executable(replay_make_bundle ${CMAKE_CURRENT_LIST_DIR}/replay_make_bundle.cu
                                  ${sgcap_replay_header})
set_target_properties(replay_make_bundle PROPERTIES CUDA_ARCHITECTURES 90 CUDA_STANDARD 17
                      RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
target_compile_options(replay_make_bundle PRIVATE -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter)
target_include_directories(replay_make_bundle PRIVATE ${sgcap_replay_gen} ${PROJECT_SOURCE_DIR})
target_link_libraries(replay_make_bundle PRIVATE sgcap_graph CUDA::cuda_driver)
# `sgcap` and the producer are what the tests run
add_custom_target(replay_gpu_tests ALL DEPENDS replay_make_bundle sgcap)

foreach(step make validate corrupt relocate alloc bench vs profile host fakecc fakegpu)
  add_test(NAME gpu.replay.${step} COMMAND bash ${sgcap_replay_script} ${PROJECT_BINARY_DIR} ${step})
  set_tests_properties(gpu.replay.${step} PROPERTIES LABELS "gpu" TIMEOUT 300)
  if(step STREQUAL "make")
    set_tests_properties(gpu.replay.${step} PROPERTIES FIXTURES_SETUP sgcap_replay_bundles)
  else()
    set_tests_properties(gpu.replay.${step} PROPERTIES FIXTURES_REQUIRED sgcap_replay_bundles)
  endif()
endforeach()
