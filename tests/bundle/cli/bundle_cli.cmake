# bundle_cli.cmake: reading and writing bundles through `sgcap`, one block per
# finding of issue 16 (1, 2 and the bundle items of 6); each block fails on
# sgcap before the fix. Run by ctest (tests/bundle/bundle.cmake) as:
#   cmake -DSGCAP=... -DSWAP=libswap.so -DSAMPLE=fork_join.sgraph -DOUT=.../bundle-cli
#         -DDOCS=docs -P bundle_cli.cmake
# (a script for -P only: it lives below tests/bundle/cli/ so that
# tests/CMakeLists.txt does not include it as a fragment)
foreach(v SGCAP SWAP SAMPLE OUT DOCS)
  if(NOT ${v} OR NOT CMAKE_SCRIPT_MODE_FILE)
    message(FATAL_ERROR "run with cmake -D${v}=... -P bundle_cli.cmake")
  endif()
endforeach()
if(NOT OUT MATCHES "bundle-cli$")
  message(FATAL_ERROR "OUT must be a directory of its own named bundle-cli: it is emptied")
endif()
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(IMAGE code/6479a0c37ea42a33.fatbin) # the sample's one code image

function(run want)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "exit ${rc}, wanted ${want}: ${ARGN}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  set(last_err "${err}" PARENT_SCOPE)
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

# A fresh copy of the sample bundle at OUT/name.
function(fresh name)
  file(REMOVE_RECURSE ${OUT}/${name})
  file(COPY ${SAMPLE}/ DESTINATION ${OUT}/${name})
endfunction()

function(must_not_exist p)
  if(EXISTS ${p})
    message(FATAL_ERROR "${p} was written")
  endif()
endfunction()

# ---- 1: a file swapped for a link while rewrite runs is never followed.
# The second open of the image (after the reader checked it) finds a link to
# a file outside the bundle; nothing of that file may reach the output.
fresh(race.sgraph)
file(WRITE ${OUT}/secret.txt "SECRET-LINE outside the bundle\n")
file(READ ${OUT}/race.sgraph/${IMAGE} image_bytes HEX)
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${SWAP}
                        SGCAP_TEST_SWAP=${OUT}/race.sgraph/${IMAGE}
                        SGCAP_TEST_SWAP_TARGET=${OUT}/secret.txt
                        ${SGCAP} rewrite ${OUT}/race.sgraph -o ${OUT}/race_out.sgraph
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT IS_SYMLINK ${OUT}/race.sgraph/${IMAGE})
  message(FATAL_ERROR "the race was not staged (swap_on_open did not run):\n${err}")
endif()
if(EXISTS ${OUT}/race_out.sgraph/${IMAGE})
  file(READ ${OUT}/race_out.sgraph/${IMAGE} copied)
  if(copied MATCHES "SECRET-LINE")
    message(FATAL_ERROR "rewrite copied a file from outside the bundle through a swapped link")
  endif()
endif()
if(rc EQUAL 0 OR NOT err MATCHES "symbolic link")
  message(FATAL_ERROR "want a refusal naming the link, got exit ${rc}:\n${err}")
endif()
must_not_exist(${OUT}/race_out.sgraph)

# ---- 2: --force replaces only a bundle of its own files, never the input.
fresh(in.sgraph)
fresh(user.sgraph)
file(WRITE ${OUT}/user.sgraph/thesis.tex "the user's own file\n")
run(2 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/user.sgraph --force)
if(NOT EXISTS ${OUT}/user.sgraph/thesis.tex)
  message(FATAL_ERROR "--force deleted a directory holding the user's files")
endif()
file(MAKE_DIRECTORY ${OUT}/plain)
file(WRITE ${OUT}/plain/graph.json "{}")
file(WRITE ${OUT}/plain/notes.txt "mine\n")
run(2 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/plain --force)
if(NOT EXISTS ${OUT}/plain/notes.txt)
  message(FATAL_ERROR "--force deleted a directory with a graph.json and the user's files")
endif()
file(READ ${OUT}/in.sgraph/graph.json before)
run(2 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/in.sgraph --force)
run(2 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/in.sgraph/code/new.sgraph)
file(READ ${OUT}/in.sgraph/graph.json after)
if(NOT before STREQUAL after OR EXISTS ${OUT}/in.sgraph/code/new.sgraph)
  message(FATAL_ERROR "rewrite -o INPUT changed the input bundle")
endif()
# ...and a bundle of its own files is replaced
run(0 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/out.sgraph)
run(0 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/out.sgraph --force --passes reduce)
if(NOT EXISTS ${OUT}/out.sgraph/${IMAGE} OR NOT EXISTS ${OUT}/out.sgraph/report.json)
  message(FATAL_ERROR "the replaced bundle lacks its files")
endif()

# ---- 6a: a named file that is missing is allowed (FORMAT.md section 2).
fresh(missing.sgraph)
file(REMOVE ${OUT}/missing.sgraph/${IMAGE})
run(0 ${SGCAP} rewrite ${OUT}/missing.sgraph -o ${OUT}/missing_out.sgraph)
if(NOT last_err MATCHES "warning: 1 file .*missing")
  message(FATAL_ERROR "no warning about the missing file:\n${last_err}")
endif()
run(0 ${SGCAP} check ${OUT}/missing_out.sgraph)

# ---- 6b: images[].file = "graph.json" is refused by the reader, clearly.
fresh(named_json.sgraph)
file(READ ${OUT}/named_json.sgraph/graph.json text)
string(REPLACE "\"${IMAGE}\"" "\"graph.json\"" text "${text}")
file(WRITE ${OUT}/named_json.sgraph/graph.json "${text}")
run(2 ${SGCAP} check ${OUT}/named_json.sgraph)
if(NOT last_err MATCHES "images\\[0\\] \\(id 0\\)\\.file")
  message(FATAL_ERROR "want an error naming images[0].file:\n${last_err}")
endif()
run(2 ${SGCAP} rewrite ${OUT}/named_json.sgraph -o ${OUT}/named_json_out.sgraph)
must_not_exist(${OUT}/named_json_out.sgraph)

# ---- 6c: an image whose bytes do not match its hash is noticed.
fresh(damaged.sgraph)
file(WRITE ${OUT}/damaged.sgraph/${IMAGE} "not the captured code")
run(2 ${SGCAP} rewrite ${OUT}/damaged.sgraph -o ${OUT}/damaged_out.sgraph)
if(NOT last_err MATCHES "hash")
  message(FATAL_ERROR "want an error about the hash:\n${last_err}")
endif()
must_not_exist(${OUT}/damaged_out.sgraph)
run(0 ${SGCAP} inspect --code ${OUT}/damaged.sgraph)
if(NOT last_out MATCHES "hash to [0-9a-f]+, not to images\\[0\\]\\.hash")
  message(FATAL_ERROR "inspect --code does not say the image is damaged:\n${last_out}")
endif()

# ---- 6d: an output path that cannot be written: nothing is written.
run(2 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/report_out.sgraph --report /nonexistent/r.txt)
must_not_exist(${OUT}/report_out.sgraph)
run(2 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/report_out.sgraph --json /nonexistent/r.json)
must_not_exist(${OUT}/report_out.sgraph)
run(0 ${SGCAP} rewrite ${OUT}/in.sgraph -o ${OUT}/report_out.sgraph --report ${OUT}/r.txt
    --json ${OUT}/r.json)
foreach(f r.txt r.json report_out.sgraph/report.txt)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "missing ${f}")
  endif()
endforeach()
file(GLOB leftovers ${OUT}/*.tmp ${OUT}/*.tmp.*)
if(leftovers)
  message(FATAL_ERROR "temporary files left: ${leftovers}")
endif()

# ---- the JSON sgcap prints names its schema, as docs/SCHEMAS.md says.
file(READ ${DOCS}/SCHEMAS.md schemas)
file(READ ${OUT}/r.json report)
if(NOT report MATCHES "^{\n  \"schema\": \"sgcap-rewrite-report\",\n  \"schema_version\": ([0-9]+),")
  message(FATAL_ERROR "report.json does not begin with its schema:\n${report}")
endif()
set(v ${CMAKE_MATCH_1})
if(NOT schemas MATCHES "## `sgcap-rewrite-report`, version ${v}\n")
  message(FATAL_ERROR "docs/SCHEMAS.md does not describe sgcap-rewrite-report version ${v}")
endif()
execute_process(COMMAND ${SGCAP} check --json ${OUT}/in.sgraph OUTPUT_VARIABLE check RESULT_VARIABLE rc)
if(NOT check MATCHES "^{\n  \"schema\": \"sgcap-check\",\n  \"schema_version\": ([0-9]+),")
  message(FATAL_ERROR "check --json does not begin with its schema:\n${check}")
endif()
set(v ${CMAKE_MATCH_1})
if(NOT schemas MATCHES "## `sgcap-check`, version ${v}\n")
  message(FATAL_ERROR "docs/SCHEMAS.md does not describe sgcap-check version ${v}")
endif()
