# bench_rewrite: the rewrite passes (each alone with the ordering verifier,
# all in one run) and the hazard check on synthetic 8-stream captures of 10k
# and 100k nodes, and three references (a graph copy, a walk of every edge,
# the reachability snapshot); prints the median and best ms at each size, the
# 100k/10k ratios (of the medians, the best runs and each run's pair) and the
# target beside them (judged on the pairs, bench_rewrite.c says why). CPU only.
# Run: build/bench/bench_rewrite [SMALL LARGE [REPEAT]]
if(TARGET sgcap_rewrite)
  add_executable(bench_rewrite ${CMAKE_CURRENT_LIST_DIR}/bench_rewrite.c)
  sgcap_target_defaults(bench_rewrite)
  target_include_directories(bench_rewrite PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(bench_rewrite PRIVATE sgcap_rewrite sgcap_graph)
  set_target_properties(bench_rewrite PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR})
endif()

# rewrite_equiv: the equivalence harness (rewrite_equiv.c says how to use it):
# a hash per pipeline and graph, to compare before and after a change.
if(TARGET sgcap_rewrite)
  add_executable(rewrite_equiv ${CMAKE_CURRENT_LIST_DIR}/rewrite_equiv.c)
  sgcap_target_defaults(rewrite_equiv)
  target_include_directories(rewrite_equiv PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(rewrite_equiv PRIVATE sgcap_rewrite sgcap_graph)
  set_target_properties(rewrite_equiv PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SGCAP_BENCH_DIR})
endif()

# The bench must keep running and printing every row (a smoke test at tiny
# sizes; it asserts the rows and the exit status, never a time).
if(TARGET bench_rewrite)
  add_test(NAME bench_rewrite_smoke
           COMMAND sh -c "out=$($<TARGET_FILE:bench_rewrite> 64 640 1) || exit 1; for row in control-deps fusion-legality defer-dealloc reduce 'all passes' check 'clone (ref)' 'walk (ref)' 'reach (ref)' 'targets (all passes)'; do printf '%s\\n' \"$out\" | grep -q \"^$row\" || { echo \"missing row: $row\"; printf '%s\\n' \"$out\"; exit 1; }; done")
endif()
