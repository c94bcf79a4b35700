# tests/mangled/mangled.cmake: the inputs of test_mangled (graph/mangled.c):
# kernels.cu compiled to a cubin by nvcc at build time (real nvcc 13 kernel
# names: lambdas, packs, decltype, ...), plus toolkit_names.txt (kernel
# names read from the CUDA 13 libraries' fatbins: cuBLAS, cuBLASLt, cuSPARSE,
# cuSOLVER, cuRAND, cuDNN, NCCL) and deep_names.txt (names too deep for
# libstdc++'s demangler, with the answer `c++filt --no-recurse-limit` gives).
if(NOT TARGET test_mangled)
  return()
endif()
set(sgcap_mangled_nvcc "${CUDAToolkit_NVCC_EXECUTABLE}")
if(NOT sgcap_mangled_nvcc OR NOT EXISTS "${sgcap_mangled_nvcc}")
  message(FATAL_ERROR "tests/mangled: nvcc not found; test_mangled needs it (CUDA 13 toolkit)")
endif()
set(sgcap_mangled_cubin ${PROJECT_BINARY_DIR}/tests/mangled/kernels.cubin)
add_custom_command(
  OUTPUT ${sgcap_mangled_cubin}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/tests/mangled
  COMMAND ${sgcap_mangled_nvcc} -cubin -arch=sm_90 -std=c++17 --extended-lambda -w
          -o ${sgcap_mangled_cubin} ${CMAKE_CURRENT_LIST_DIR}/kernels.cu
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/kernels.cu
  COMMENT "nvcc -cubin tests/mangled/kernels.cu"
  VERBATIM)
add_custom_target(sgcap_mangled_data DEPENDS ${sgcap_mangled_cubin})
add_dependencies(test_mangled sgcap_mangled_data)
target_compile_definitions(test_mangled PRIVATE SGCAP_MANGLED_CUBIN="${sgcap_mangled_cubin}"
                           SGCAP_MANGLED_DIR="${CMAKE_CURRENT_LIST_DIR}")
