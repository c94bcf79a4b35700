# bench_graph: build, serialize, write, read and dump of synthetic graphs at
# 10k and 100k nodes; prints ns per node per phase and the 100k/10k ratio.
# CPU only. Run: build/bench/bench_graph [DIR] [SMALL LARGE]
add_executable(bench_graph ${CMAKE_CURRENT_LIST_DIR}/bench_graph.c)
sgcap_target_defaults(bench_graph)
target_include_directories(bench_graph PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(bench_graph PRIVATE sgcap_graph)
set_target_properties(bench_graph PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR})
