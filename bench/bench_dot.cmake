# bench_dot: `sgcap dot -o X.svg` (Graphviz included) on synthetic captures of
# 1,000, 3,000 and 20,000 nodes; prints the seconds of each run.
# CPU only (needs Graphviz). Run: build/bench/bench_dot build/bin/sgcap [DIR [N...]]
add_executable(bench_dot ${CMAKE_CURRENT_LIST_DIR}/bench_dot.c)
sgcap_target_defaults(bench_dot)
target_include_directories(bench_dot PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(bench_dot PRIVATE sgcap_graph)
set_target_properties(bench_dot PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR})
