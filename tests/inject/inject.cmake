# CPU test fixtures for inject/ (tests/unit/test_inject.c): a fake libcuda.so.1
# and libnvrtc.so.13, a probe that reaches the driver like static cudart does,
# a probe linked with -lcuda -lnvrtc, and a minimal CUDA runtime program.
if(NOT TARGET sgcap_shim)
  return()
endif()
set(SGCAP_INJECT_TEST_DIR ${CMAKE_BINARY_DIR}/tests/inject)

add_library(inject_fake_cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_cuda.c)
set_target_properties(inject_fake_cuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${SGCAP_INJECT_TEST_DIR}/fake C_VISIBILITY_PRESET hidden)
target_include_directories(inject_fake_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
# Like the real driver, its own addresses are its own (not our interposed ones).
target_link_options(inject_fake_cuda PRIVATE -Wl,-Bsymbolic-functions)
target_link_libraries(inject_fake_cuda PRIVATE ${CMAKE_DL_LIBS})

add_library(inject_fake_nvrtc SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_nvrtc.c)
set_target_properties(inject_fake_nvrtc PROPERTIES OUTPUT_NAME nvrtc SOVERSION 13
  LIBRARY_OUTPUT_DIRECTORY ${SGCAP_INJECT_TEST_DIR}/fake C_VISIBILITY_PRESET hidden)
target_include_directories(inject_fake_nvrtc PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_options(inject_fake_nvrtc PRIVATE
  -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/fake_nvrtc.map)

add_executable(inject_probe ${CMAKE_CURRENT_LIST_DIR}/probe.c)
set_target_properties(inject_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_INJECT_TEST_DIR})
target_include_directories(inject_probe PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(inject_probe PRIVATE ${CMAKE_DL_LIBS} pthread)

add_executable(inject_probe_direct ${CMAKE_CURRENT_LIST_DIR}/probe_direct.c)
set_target_properties(inject_probe_direct PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_INJECT_TEST_DIR})
target_include_directories(inject_probe_direct PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(inject_probe_direct PRIVATE inject_fake_cuda inject_fake_nvrtc ${CMAKE_DL_LIBS})

set(SGCAP_INJECT_TEST_DEPS sgcap_shim inject_fake_cuda inject_fake_nvrtc inject_probe
    inject_probe_direct)

# A real CUDA runtime program, static and shared cudart: without a GPU it
# must behave the same with and without the shim.
if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  foreach(variant static shared)
    add_executable(inject_cuda_hello_${variant} ${CMAKE_CURRENT_LIST_DIR}/cuda_hello.cu)
    set_target_properties(inject_cuda_hello_${variant} PROPERTIES
      RUNTIME_OUTPUT_DIRECTORY ${SGCAP_INJECT_TEST_DIR} CUDA_ARCHITECTURES 90
      CUDA_RUNTIME_LIBRARY ${variant})
    list(APPEND SGCAP_INJECT_TEST_DEPS inject_cuda_hello_${variant})
  endforeach()
  # The shared build finds libcudart.so.13 in the toolkit (CPU tests only).
  set_target_properties(inject_cuda_hello_shared PROPERTIES
    BUILD_RPATH "${CUDAToolkit_LIBRARY_DIR}")
endif()

if(TARGET test_inject)
  add_dependencies(test_inject ${SGCAP_INJECT_TEST_DEPS})
endif()
