# writer_links.cmake: the program that only writes a bundle works and holds
# none of the reader's functions. Run as
#   cmake -DNM=nm -DBIN=bundle_writer_only -DOUT=x.sgraph -P writer_links.cmake
execute_process(COMMAND ${BIN} ${OUT} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT}/graph.json)
  message(FATAL_ERROR "writer_only failed (${rc}): ${err}")
endif()
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${NM} ${BIN} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT syms MATCHES "sg_bundle_write")
  message(FATAL_ERROR "nm ${BIN} failed or shows no sg_bundle_write")
endif()
foreach(s sg_bundle_parse_json sg_bundle_open sg_json_init json_loadb)
  if(syms MATCHES "[ \t]${s}\n")
    message(FATAL_ERROR "writing a bundle links ${s}: the reader rides along")
  endif()
endforeach()
