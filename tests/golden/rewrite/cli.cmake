# cli.cmake: `sgcap check` and `sgcap rewrite` end to end on the fixtures:
# exit codes 0/1/2, one error line for bad input, nothing written on
# failure, the output bundle readable and hazard-free, --help naming every
# pass. Run by ctest as: cmake -DSGCAP=... -DFIXTURES=... -DOUT=... -P cli.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})

function(expect_rc want)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "exit ${rc}, wanted ${want}: ${ARGN}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()

expect_rc(1 ${SGCAP} check ${FIXTURES}/bug_missing_wait.sgraph)
expect_rc(1 ${SGCAP} check --json ${FIXTURES}/bug_unjoined_fork.sgraph)
if(NOT last_out MATCHES "\"kind\": \"race\",\n *\"proven\": true" OR
   NOT last_out MATCHES "\"joined_at_end\": \\[\n *{\n *\"stream\": \"s1\"" OR
   NOT last_out MATCHES "\"schema_version\": 2")
  message(FATAL_ERROR "check --json: no proven race, s1 joined at the end, or schema 2 in:\n${last_out}")
endif()
# without its code a planted bug is only possible: exit 0, or 1 with --strict
expect_rc(0 ${SGCAP} check --no-analysis ${FIXTURES}/bug_missing_wait.sgraph)
if(NOT last_out MATCHES "possible race on a .*not proven: n1 is not analysed")
  message(FATAL_ERROR "check --no-analysis: want a possible race saying why:\n${last_out}")
endif()
expect_rc(1 ${SGCAP} check --no-analysis --strict ${FIXTURES}/bug_missing_wait.sgraph)
expect_rc(0 ${SGCAP} check ${FIXTURES}/fork_join.sgraph)
expect_rc(2 ${SGCAP} check ${FIXTURES}/no_such.sgraph)
expect_rc(2 ${SGCAP} check --bogus ${FIXTURES}/fork_join.sgraph)

# inspect --access: the facts computed now, then read from a rewritten bundle
expect_rc(0 ${SGCAP} inspect --access ${FIXTURES}/bug_missing_wait.sgraph n1)
if(NOT last_out MATCHES "computed now" OR
   NOT last_out MATCHES "n1 kernel k_produce: ptx, every access known, addresses complete; pointer words: @0 @8" OR
   NOT last_out MATCHES "store  line [0-9]+ +@0 +known +dense a " OR last_out MATCHES "\nn2 ")
  message(FATAL_ERROR "inspect --access n1: want n1's PTX facts only:\n${last_out}")
endif()
expect_rc(0 ${SGCAP} inspect --access --json ${FIXTURES}/bug_missing_wait.sgraph)
if(NOT last_out MATCHES "\"schema\": \"sgcap-access\"" OR
   NOT last_out MATCHES "\"kernel_nodes\": 4" OR NOT last_out MATCHES "\"all_known\": 4")
  message(FATAL_ERROR "inspect --access --json: want schema sgcap-access, 4 of 4 known:\n${last_out}")
endif()
expect_rc(0 ${SGCAP} rewrite ${FIXTURES}/bug_missing_wait.sgraph -o ${OUT}/analysed.sgraph)
expect_rc(0 ${SGCAP} inspect --access ${OUT}/analysed.sgraph)
if(NOT last_out MATCHES "\\(from the bundle\\)")
  message(FATAL_ERROR "inspect --access of a rewritten bundle: want its stored facts:\n${last_out}")
endif()
expect_rc(2 ${SGCAP} inspect --access ${FIXTURES}/bug_missing_wait.sgraph n99)

# no disassembler: check still runs (SASS-only kernels unknown, their race
# only possible: exit 0) and inspect --access says why
set(cupy ${FIXTURES}/../data/access/cupy_elementwise.sgraph)
expect_rc(0 ${CMAKE_COMMAND} -E env SGCAP_NVDISASM=/nonexistent ${SGCAP} check ${cupy})
if(NOT last_out MATCHES "0 proven, 1 possible" OR NOT last_out MATCHES "its code unknown: no disassembler")
  message(FATAL_ERROR "check without nvdisasm: want one possible race, no disassembler:\n${last_out}")
endif()
expect_rc(0 ${CMAKE_COMMAND} -E env SGCAP_NVDISASM=/nonexistent ${SGCAP} inspect --access ${cupy})
if(NOT last_out MATCHES "sg_scale: unknown; pointer words: none\n +why: no disassembler")
  message(FATAL_ERROR "inspect --access without nvdisasm: want 'unknown ... no disassembler':\n${last_out}")
endif()

# a malformed bundle: one error line, exit 2, nothing written
file(MAKE_DIRECTORY ${OUT}/bad.sgraph)
file(WRITE ${OUT}/bad.sgraph/graph.json "{\"format\": \"sgcap-bundle\", \"version\": 1, \"nodes\": [{\"id\": 0}], \"edges\": []}")
expect_rc(2 ${SGCAP} rewrite ${OUT}/bad.sgraph -o ${OUT}/from_bad.sgraph)
string(STRIP "${last_err}" err)
string(FIND "${err}" "\n" nl)
if(NOT nl EQUAL -1 OR NOT err MATCHES "graph.json")
  message(FATAL_ERROR "want one error line naming graph.json, got:\n${last_err}")
endif()
if(EXISTS ${OUT}/from_bad.sgraph)
  message(FATAL_ERROR "a bundle was written from bad input")
endif()
expect_rc(2 ${SGCAP} check ${OUT}/bad.sgraph)

# rewrite: the free-before-use bug is fixed, reports are inside and beside
expect_rc(0 ${SGCAP} rewrite ${FIXTURES}/bug_free_before_use.sgraph -o ${OUT}/fixed.sgraph
          --report ${OUT}/report.txt --json ${OUT}/report.json)
foreach(f ${OUT}/fixed.sgraph/graph.json ${OUT}/fixed.sgraph/report.txt
          ${OUT}/fixed.sgraph/report.json ${OUT}/report.txt ${OUT}/report.json)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "missing ${f}")
  endif()
endforeach()
expect_rc(0 ${SGCAP} check ${OUT}/fixed.sgraph)
expect_rc(2 ${SGCAP} rewrite ${FIXTURES}/bug_free_before_use.sgraph -o ${OUT}/fixed.sgraph)
expect_rc(0 ${SGCAP} rewrite ${FIXTURES}/bug_free_before_use.sgraph -o ${OUT}/fixed.sgraph --force
          --passes control-deps,reduce --no-verify)
expect_rc(2 ${SGCAP} rewrite ${FIXTURES}/fork_join.sgraph -o ${OUT}/bogus.sgraph --passes control-deps,bogus)
expect_rc(2 ${SGCAP} rewrite ${FIXTURES}/fork_join.sgraph)
if(EXISTS ${OUT}/bogus.sgraph)
  message(FATAL_ERROR "a bundle was written for an unknown pass")
endif()
expect_rc(0 ${SGCAP} rewrite --help)
foreach(p control-deps fusion-legality defer-dealloc reduce)
  if(NOT last_out MATCHES "${p}")
    message(FATAL_ERROR "rewrite --help does not name ${p}")
  endif()
endforeach()
expect_rc(0 ${SGCAP} check --help)
