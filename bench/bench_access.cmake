# bench_access: the access analysis' cost: analysis time per distinct kernel
# over every PTX fixture (goal <= 1 ms each) and a 10k-node synthetic graph
# (distinct kernels analysed once through the cache, every node evaluated;
# goal <= 2 s). CPU only. Run: build/bench/bench_access [FIXTURE_DIR] [NODES]
add_executable(bench_access ${CMAKE_CURRENT_LIST_DIR}/bench_access.c)
sgcap_target_defaults(bench_access)
target_include_directories(bench_access PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(bench_access PRIVATE sgcap_code sgcap_graph)
target_compile_definitions(bench_access PRIVATE SGCAP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
set_target_properties(bench_access PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR})
