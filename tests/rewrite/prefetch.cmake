# tests/rewrite/prefetch.cmake: the passes' software prefetches survive the
# compiler, in the offline and the in-app build of rewrite/
# (check_prefetch.sh says why). x86-64 only: elsewhere a prefetch may
# compile to nothing at all.
if(NOT TARGET sgcap_rewrite OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  return()
endif()
set(sgcap_prefetch_archives $<TARGET_FILE:sgcap_rewrite>)
if(TARGET sgcap_rewrite_app)
  list(APPEND sgcap_prefetch_archives $<TARGET_FILE:sgcap_rewrite_app>)
endif()
add_test(NAME rewrite.prefetch_kept
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_prefetch.sh ${PROJECT_SOURCE_DIR}/rewrite
                 ${sgcap_prefetch_archives})
set_tests_properties(rewrite.prefetch_kept PROPERTIES LABELS "cpu;rewrite" TIMEOUT 60)
