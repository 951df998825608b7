# Installs the built tree into a scratch prefix, then configures, builds and runs a tiny
# project that uses it through find_package(cutoff CONFIG) and cutoff::cutoff.
set(work "${CUTOFF_BUILD_DIR}/install-test")
file(REMOVE_RECURSE "${work}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${CUTOFF_BUILD_DIR}" --prefix "${work}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${CUTOFF_SOURCE_DIR}/tests/install/consumer" -B "${work}/build"
                        -G Ninja -DCMAKE_PREFIX_PATH=${work}/prefix -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${work}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND "${work}/build/consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "consumer said: ${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "deadline_exceeded" OR NOT out MATCHES "graphiql_page_bytes=[1-9]")
  message(FATAL_ERROR "the consumer did not run as expected (${rc}): ${out}")
endif()
file(REMOVE_RECURSE "${work}")
