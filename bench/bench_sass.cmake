# bench_sass: cost of the SASS access analysis (code/sass.h) per kernel,
# nvdisasm included, on a generated cubin of 200 PyTorch-shaped kernels
# (bench_sass_kernels.py, compiled here for sm_90) and on any cubins given.
# Needs nvdisasm at run time (it says so and exits 0 when there is none).
# Run: build/bench/bench_sass [CUBIN...]
find_package(Python3 COMPONENTS Interpreter)
set(sgcap_bench_sass_cu ${CMAKE_BINARY_DIR}/bench/sass_many.cu)
set(sgcap_bench_sass_cubin ${CMAKE_BINARY_DIR}/bench/sass_many_sm90.cubin)
if(Python3_Interpreter_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
  add_custom_command(OUTPUT ${sgcap_bench_sass_cubin}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/bench_sass_kernels.py ${sgcap_bench_sass_cu} 200
    COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -cubin -arch=sm_90 -o ${sgcap_bench_sass_cubin} ${sgcap_bench_sass_cu}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/bench_sass_kernels.py
    COMMENT "nvcc: 200 kernels for bench_sass"
    VERBATIM)
  add_custom_target(bench_sass_cubin DEPENDS ${sgcap_bench_sass_cubin})
endif()
add_executable(bench_sass ${CMAKE_CURRENT_LIST_DIR}/bench_sass.c)
sgcap_target_defaults(bench_sass)
target_include_directories(bench_sass PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(bench_sass PRIVATE sgcap_code)
target_compile_definitions(bench_sass PRIVATE SGCAP_BENCH_SASS_CUBIN="${sgcap_bench_sass_cubin}")
set_target_properties(bench_sass PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR})
if(TARGET bench_sass_cubin)
  add_dependencies(bench_sass bench_sass_cubin)
endif()
