# nvcc_case.cmake: run by fatbin.cmake as `cmake -P` at build time for one
# test input: compiles it with nvcc, saves nvcc's --dryrun (whose fatbinary
# lines list the images packed: the oracle test_fatbin checks the reader
# against) and, when cuobjdump exists, `cuobjdump -lelf -lptx` as a second
# oracle. Included by the tests/*/*.cmake glob too: then it does nothing.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  return()
endif()
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${NVCC} ${args} -o ${OUT} ${SRC} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc ${ARGS} failed (${rc}):\n${out}")
endif()
execute_process(COMMAND ${NVCC} --dryrun ${args} -o ${OUT} ${SRC} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc --dryrun ${ARGS} failed (${rc}):\n${err}")
endif()
file(WRITE ${OUT}.dryrun "${out}${err}")
if(CUOBJDUMP)
  execute_process(COMMAND ${CUOBJDUMP} -lelf -lptx ${OUT} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  # cuobjdump exits non-zero when a file has no PTX; the listing still counts.
  file(WRITE ${OUT}.cuobjdump "${out}")
endif()
