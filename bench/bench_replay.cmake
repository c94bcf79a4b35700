# bench/bench_replay.cmake: `ninja bench_replay` runs bench/bench_replay.sh
# on this build tree (needs a GPU). The producer it drives,
# replay_make_bundle, is built by tests/gpu/replay.cmake.
if(TARGET replay_make_bundle AND TARGET sgcap)
  add_custom_target(bench_replay
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench_replay.sh ${PROJECT_BINARY_DIR}
    DEPENDS replay_make_bundle sgcap
    USES_TERMINAL
    COMMENT "bench_replay: replayed vs original launch time; build cost per node")
endif()
