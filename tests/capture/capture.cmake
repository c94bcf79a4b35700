# tests/capture/capture.cmake: the capture shim end to end on the CPU: a fake
# libcuda.so.1 with stream-capture and graph semantics (fake_graph_cuda.c), a
# driver-API probe linked with it (capture_probe.c), and capture_cpu.sh, which
# runs the probe's scenarios under `sgcap run` and checks the bundles with
# topo_compare, inspect and dot (label cpu).
if(NOT TARGET sgcap_shim OR NOT TARGET sgcap)
  return()
endif()
set(SGCAP_CAPTURE_TEST_DIR ${CMAKE_BINARY_DIR}/tests/capture)

add_library(capture_fake_cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_graph_cuda.c)
set_target_properties(capture_fake_cuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${SGCAP_CAPTURE_TEST_DIR}/fake C_VISIBILITY_PRESET hidden)
target_include_directories(capture_fake_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_options(capture_fake_cuda PRIVATE -Wl,-Bsymbolic-functions)
target_link_libraries(capture_fake_cuda PRIVATE ${CMAKE_DL_LIBS} m)

# A fake libcupti.so.13 (one subscriber, per-id callbacks) for the shim
# loaded through CUDA_INJECTION64_PATH alone.
add_library(capture_fake_cupti SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_cupti.c)
set_target_properties(capture_fake_cupti PROPERTIES OUTPUT_NAME cupti SOVERSION 13
  LIBRARY_OUTPUT_DIRECTORY ${SGCAP_CAPTURE_TEST_DIR}/fake C_VISIBILITY_PRESET hidden)
target_include_directories(capture_fake_cupti PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
add_dependencies(capture_fake_cuda capture_fake_cupti)

add_executable(capture_probe ${CMAKE_CURRENT_LIST_DIR}/capture_probe.c)
set_target_properties(capture_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_CAPTURE_TEST_DIR})
target_include_directories(capture_probe PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(capture_probe PRIVATE capture_fake_cuda pthread)

# Two Triton-like one-kernel cubins and their PTX, for the Triton cache test.
set(triton_dir ${SGCAP_CAPTURE_TEST_DIR}/triton-src)
set(triton_src ${CMAKE_CURRENT_LIST_DIR}/triton_kernels.cu)
set(triton_outputs)
foreach(k add0 sum1)
  if(k STREQUAL "sum1")
    set(def -DSECOND)
  else()
    set(def "")
  endif()
  foreach(kind cubin ptx)
    add_custom_command(
      OUTPUT ${triton_dir}/${k}.${kind}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${triton_dir}
      COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -${kind} -arch=sm_90 ${def} -o ${triton_dir}/${k}.${kind}
              ${triton_src}
      DEPENDS ${triton_src}
      COMMENT "capture test: Triton-like ${k}.${kind}"
      VERBATIM)
    list(APPEND triton_outputs ${triton_dir}/${k}.${kind})
  endforeach()
endforeach()
add_custom_target(capture_triton_kernels ALL DEPENDS ${triton_outputs})

add_test(NAME capture.cpu_end_to_end
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/capture_cpu.sh $<TARGET_FILE:sgcap>
                 $<TARGET_FILE:capture_probe> ${SGCAP_CAPTURE_TEST_DIR}/fake
                 $<TARGET_FILE:topo_compare> ${SGCAP_CAPTURE_TEST_DIR}/work ${triton_dir})
set_tests_properties(capture.cpu_end_to_end PROPERTIES LABELS "cpu;capture" TIMEOUT 300)

# tests/gpu/inject_check.sh on the CPU: what it requires of a trace comes from
# the expected topology, and a topology of another shape is refused.
add_test(NAME inject.check_cpu
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/inject_check_cpu.sh $<TARGET_FILE:sgcap_shim>
                 $<TARGET_FILE:capture_probe> ${SGCAP_CAPTURE_TEST_DIR}/fake
                 ${SGCAP_CAPTURE_TEST_DIR}/inject_check)
set_tests_properties(inject.check_cpu PROPERTIES LABELS "cpu;inject" TIMEOUT 300)
