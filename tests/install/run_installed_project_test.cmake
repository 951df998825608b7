# Installs a build of cutoff into a scratch prefix, then builds and runs a project that uses it
# through find_package(cutoff CONFIG) and cutoff::cutoff, and optionally through pkg-config.
#
#   cmake -DCUTOFF_BUILD_DIR=... -DPROJECT_DIR=... -DPROGRAM=name [-DPROGRAM_ARGS=a;b]
#         [-DPG_URL_FILE=file] [-DEXPECT=regex]
#         [-DSHARED=ON -DSOURCE_DIR=... -DGENERATOR=... -DINITIAL_CACHE=file]
#         [-DPKG_CONFIG_SOURCES=main.cpp;... -DCXX=compiler] -P run_installed_project_test.cmake
#
# With SHARED, the library alone is first built from SOURCE_DIR as shared libraries in
# <CUTOFF_BUILD_DIR>-shared (INITIAL_CACHE: the build's own compiler and flags, and
# BUILD_SHARED_LIBS=ON), and that is what gets installed. Beside the build tree and with the
# same compile commands, its objects come from ccache. With PKG_CONFIG_SOURCES, those sources
# of the project are also compiled and linked with nothing but the flags of `pkg-config
# cutoff`, and that program runs too. With PG_URL_FILE, `--db <the URL in it>` is added to the
# program's arguments. The test fails unless each program exits 0 and prints a match for
# EXPECT (when given), and with SHARED, unless each loads libcutoff_core from the prefix.
cmake_minimum_required(VERSION 3.25)
find_program(CCACHE ccache)
get_filename_component(name "${PROJECT_DIR}" NAME)
set(installed "${CUTOFF_BUILD_DIR}")
if(SHARED)
  string(APPEND name "-shared")
  set(installed "${CUTOFF_BUILD_DIR}-shared")
  execute_process(COMMAND ${CMAKE_COMMAND} -C "${INITIAL_CACHE}" -G "${GENERATOR}" -S "${SOURCE_DIR}" -B "${installed}"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the shared libraries failed (${rc})")
  endif()
  # With ccache, one job: the test takes one core among the others CTest runs, like any test.
  # Without, every object compiles again, on every core.
  set(jobs "")
  if(CCACHE)
    set(jobs --parallel 1)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${installed}" ${jobs} RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the shared libraries failed (${rc})")
  endif()
endif()

set(work "${CUTOFF_BUILD_DIR}/installed-project-test/${name}")
file(REMOVE_RECURSE "${work}")
set(prefix "${work}/prefix")
set(args ${PROGRAM_ARGS})
if(PG_URL_FILE)
  file(READ "${PG_URL_FILE}" pg_url)
  string(STRIP "${pg_url}" pg_url)
  list(APPEND args --db "${pg_url}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install "${installed}" --prefix "${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()

# Runs `program`; fails the test unless it exits 0, prints EXPECT and, with SHARED, loads
# libcutoff_core from the prefix.
function(check_program program)
  execute_process(COMMAND "${program}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${program} said:\n${out}${err}")
  if(NOT rc EQUAL 0 OR (EXPECT AND NOT out MATCHES "${EXPECT}"))
    message(FATAL_ERROR "${program} did not run as expected (exit ${rc})")
  endif()
  if(SHARED)
    execute_process(COMMAND ldd "${program}" OUTPUT_VARIABLE libraries RESULT_VARIABLE rc)
    string(REGEX MATCH "libcutoff_core\\.so[^\n]*" core "${libraries}")
    string(FIND "${core}" "=> ${prefix}/" at)
    if(NOT rc EQUAL 0 OR at EQUAL -1)
      message(FATAL_ERROR "${program} does not load libcutoff_core from ${prefix}:\n${libraries}")
    endif()
  endif()
endfunction()

set(launcher "")
set(compile_launcher "")
if(CCACHE)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE}")
  set(compile_launcher "${CCACHE}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${work}/build" -G Ninja
                        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release ${launcher}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring ${name} failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${work}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building ${name} failed (${rc})")
endif()
check_program("${work}/build/${PROGRAM}")

if(PKG_CONFIG_SOURCES)
  find_program(PKG_CONFIG pkg-config REQUIRED)
  file(GLOB_RECURSE pc_file "${prefix}/*/pkgconfig/cutoff.pc")
  get_filename_component(pc_dir "${pc_file}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  foreach(query cflags libs)
    execute_process(COMMAND ${PKG_CONFIG} --${query} cutoff RESULT_VARIABLE rc OUTPUT_VARIABLE ${query}
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "pkg-config --${query} cutoff failed (${rc})")
    endif()
    message(STATUS "pkg-config --${query} cutoff: ${${query}}")
    separate_arguments(${query} UNIX_COMMAND "${${query}}")
  endforeach()
  set(pc_work "${work}/pkg-config")
  file(MAKE_DIRECTORY "${pc_work}")
  set(objects "")
  foreach(source IN LISTS PKG_CONFIG_SOURCES)
    get_filename_component(stem "${source}" NAME_WE)
    execute_process(COMMAND ${compile_launcher} ${CXX} -std=c++20 -O2 ${cflags}
                            -c "${PROJECT_DIR}/${source}" -o ${stem}.o
                    WORKING_DIRECTORY "${pc_work}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "compiling ${source} with the flags of pkg-config failed (${rc})")
    endif()
    list(APPEND objects ${stem}.o)
  endforeach()
  set(rpath "")
  if(SHARED)
    get_filename_component(libdir "${pc_dir}" DIRECTORY)
    set(rpath "-Wl,-rpath,${libdir}")
  endif()
  execute_process(COMMAND ${CXX} ${objects} -o ${PROGRAM} ${libs} ${rpath} WORKING_DIRECTORY "${pc_work}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "linking ${PROGRAM} with the flags of pkg-config failed (${rc})")
  endif()
  check_program("${pc_work}/${PROGRAM}")
endif()
file(REMOVE_RECURSE "${work}")
