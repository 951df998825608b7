# Installs the built tree into a scratch prefix, then configures, builds and runs the
# getting-started example (examples/getting-started) against it with --check on the test
# PostgreSQL: the service of docs/getting-started.md must do what the guide says.
#   cmake -DCUTOFF_BUILD_DIR=... -DCUTOFF_SOURCE_DIR=... -DPG_URL_FILE=... -P run_example_test.cmake
set(work "${CUTOFF_BUILD_DIR}/example-test")
file(REMOVE_RECURSE "${work}")
file(READ "${PG_URL_FILE}" pg_url)
string(STRIP "${pg_url}" pg_url)
execute_process(COMMAND ${CMAKE_COMMAND} --install "${CUTOFF_BUILD_DIR}" --prefix "${work}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
find_program(CCACHE ccache)
set(launcher "")
if(CCACHE)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${CUTOFF_SOURCE_DIR}/examples/getting-started" -B "${work}/build"
                        -G Ninja -DCMAKE_PREFIX_PATH=${work}/prefix -DCMAKE_BUILD_TYPE=Release ${launcher}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the example failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${work}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the example failed (${rc})")
endif()
execute_process(COMMAND "${work}/build/orders_service" --db "${pg_url}" --check
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "orders_service --check said:\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the getting-started example failed its check (${rc})")
endif()
file(REMOVE_RECURSE "${work}")
