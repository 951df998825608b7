# Installs the built tree into a scratch prefix, then configures, builds and runs a project
# that uses it through find_package(cutoff CONFIG) and cutoff::cutoff.
#
#   cmake -DCUTOFF_BUILD_DIR=... -DPROJECT_DIR=... -DPROGRAM=name [-DPROGRAM_ARGS=a;b]
#         [-DPG_URL_FILE=file] [-DEXPECT=regex] -P run_installed_project_test.cmake
#
# With PG_URL_FILE, `--db <the URL in it>` is added to the program's arguments. The test
# fails unless the program exits 0 and its output matches EXPECT (when given).
get_filename_component(name "${PROJECT_DIR}" NAME)
set(work "${CUTOFF_BUILD_DIR}/installed-project-test/${name}")
file(REMOVE_RECURSE "${work}")
set(args ${PROGRAM_ARGS})
if(PG_URL_FILE)
  file(READ "${PG_URL_FILE}" pg_url)
  string(STRIP "${pg_url}" pg_url)
  list(APPEND args --db "${pg_url}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install "${CUTOFF_BUILD_DIR}" --prefix "${work}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(launcher "")
find_program(CCACHE ccache)
if(CCACHE)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${work}/build" -G Ninja
                        -DCMAKE_PREFIX_PATH=${work}/prefix -DCMAKE_BUILD_TYPE=Release ${launcher}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring ${name} failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${work}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building ${name} failed (${rc})")
endif()
execute_process(COMMAND "${work}/build/${PROGRAM}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${PROGRAM} said:\n${out}${err}")
if(NOT rc EQUAL 0 OR (EXPECT AND NOT out MATCHES "${EXPECT}"))
  message(FATAL_ERROR "${PROGRAM} did not run as expected (exit ${rc})")
endif()
file(REMOVE_RECURSE "${work}")
