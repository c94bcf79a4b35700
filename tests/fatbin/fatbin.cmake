# fatbin.cmake: code images that nvcc produces in the build, for test_fatbin
# (and, copied by hand, the fuzz_fatbin seeds). One nvcc run per mode the
# reader must handle: every --compress-mode, -arch=sm_90, the default arch,
# SASS-only gencode, a multi-arch fatbin, -G, relocatable objects, a linked
# executable, a cubin and a PTX file. No GPU is needed, but nvcc is: the
# tests are never skipped for want of it.
set(SGCAP_NVCC "${CUDAToolkit_NVCC_EXECUTABLE}")
if(NOT SGCAP_NVCC OR NOT EXISTS "${SGCAP_NVCC}")
  find_program(SGCAP_NVCC_FOUND nvcc HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
  set(SGCAP_NVCC "${SGCAP_NVCC_FOUND}")
endif()
if(NOT SGCAP_NVCC OR NOT EXISTS "${SGCAP_NVCC}")
  message(FATAL_ERROR "tests/fatbin: nvcc not found; the fatbin tests need it (CUDA 13 toolkit)")
endif()
find_program(SGCAP_CUOBJDUMP cuobjdump HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
if(SGCAP_CUOBJDUMP)
  set(sgcap_cuobjdump_arg -DCUOBJDUMP=${SGCAP_CUOBJDUMP})
  set(sgcap_have_cuobjdump 1)
else()
  message(STATUS "tests/fatbin: cuobjdump not found: test_fatbin cross-checks the reader "
                 "against nvcc --dryrun's image lists only")
  set(sgcap_cuobjdump_arg "")
  set(sgcap_have_cuobjdump 0)
endif()

set(SGCAP_FATBIN_DIR ${PROJECT_BINARY_DIR}/tests/fatbin-data)
set(sgcap_fatbin_src ${PROJECT_SOURCE_DIR}/tests/data/fatbin_kernels.cu)
file(MAKE_DIRECTORY ${SGCAP_FATBIN_DIR})
set(sgcap_fatbin_outputs)

function(sgcap_fatbin_case out)
  string(REPLACE ";" " " args "${ARGN}")
  set(path ${SGCAP_FATBIN_DIR}/${out})
  add_custom_command(
    OUTPUT ${path} ${path}.dryrun
    COMMAND ${CMAKE_COMMAND} -DNVCC=${SGCAP_NVCC} ${sgcap_cuobjdump_arg} -DSRC=${sgcap_fatbin_src}
            -DOUT=${path} "-DARGS=${args}" -P ${PROJECT_SOURCE_DIR}/tests/fatbin/nvcc_case.cmake
    DEPENDS ${sgcap_fatbin_src} ${PROJECT_SOURCE_DIR}/tests/fatbin/nvcc_case.cmake
    COMMENT "nvcc ${args} -> tests/fatbin-data/${out}"
    VERBATIM)
  set(sgcap_fatbin_outputs ${sgcap_fatbin_outputs} ${path} PARENT_SCOPE)
endfunction()

sgcap_fatbin_case(cm_default.fatbin --fatbin -arch=sm_90 --compress-mode=default)
sgcap_fatbin_case(cm_speed.fatbin --fatbin -arch=sm_90 --compress-mode=speed)
sgcap_fatbin_case(cm_size.fatbin --fatbin -arch=sm_90 --compress-mode=size)
sgcap_fatbin_case(cm_none.fatbin --fatbin -arch=sm_90 --compress-mode=none)
sgcap_fatbin_case(arch90.fatbin --fatbin -arch=sm_90)
sgcap_fatbin_case(default_arch.fatbin --fatbin)
sgcap_fatbin_case(sass_only.fatbin --fatbin -gencode arch=compute_90,code=sm_90)
sgcap_fatbin_case(higher_only.fatbin --fatbin -gencode arch=compute_100,code=[sm_100,compute_100])
sgcap_fatbin_case(multi.fatbin --fatbin --compress-mode=none
  -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=compute_80
  -gencode arch=compute_90a,code=[sm_90a,compute_90a] -gencode arch=compute_90,code=compute_90
  -gencode arch=compute_100,code=[sm_100,compute_100])
sgcap_fatbin_case(debug.fatbin --fatbin -G -arch=sm_90)
sgcap_fatbin_case(rdc90.o -rdc=true -c -arch=sm_90)
sgcap_fatbin_case(rdc_default.o -rdc=true -c)
sgcap_fatbin_case(exe90 -arch=sm_90)
sgcap_fatbin_case(rdc90.cubin -cubin -rdc=true -arch=sm_90)
sgcap_fatbin_case(arch90.ptx -ptx -arch=sm_90)

add_custom_target(sgcap_fatbin_data DEPENDS ${sgcap_fatbin_outputs})
if(TARGET test_fatbin)
  add_dependencies(test_fatbin sgcap_fatbin_data)
  target_compile_definitions(test_fatbin PRIVATE SGCAP_FATBIN_DIR="${SGCAP_FATBIN_DIR}"
                             SGCAP_FATBIN_HAVE_CUOBJDUMP=${sgcap_have_cuobjdump})
endif()
