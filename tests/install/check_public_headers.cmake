# Installs the built tree into a scratch prefix and checks its headers against the modules'
# lists (HDRS, INTERNAL_HDRS and PRIVATE_HDRS of cutoff_add_module, written to MANIFEST when
# the build was configured):
#
#   cmake -DCUTOFF_BUILD_DIR=... -DSOURCE_DIR=... -DMANIFEST=... -P check_public_headers.cmake
#
# - the installed headers are exactly the HDRS and INTERNAL_HDRS of every module;
# - every cutoff header an installed header includes is installed too;
# - an INTERNAL_HDRS entry is there because an installed header includes it;
# - every header under cutoff/ is in one of the lists, or in an internal/ directory.
cmake_minimum_required(VERSION 3.25)
set(work "${CUTOFF_BUILD_DIR}/public-headers-check")
file(REMOVE_RECURSE "${work}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${CUTOFF_BUILD_DIR}" --prefix "${work}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()

set(public "")
set(internal "")
set(private "")
file(STRINGS "${MANIFEST}" entries)
foreach(entry IN LISTS entries)
  string(REPLACE " " ";" entry "${entry}")
  list(GET entry 0 kind)
  list(GET entry 1 path)
  if(kind STREQUAL "HDRS")
    list(APPEND public "${path}")
  elseif(kind STREQUAL "INTERNAL_HDRS")
    list(APPEND internal "${path}")
  else()
    list(APPEND private "${path}")
  endif()
endforeach()

set(problems "")
macro(problem text)
  string(APPEND problems "\n  ${text}")
endmacro()

file(GLOB_RECURSE installed RELATIVE "${work}/prefix/include" "${work}/prefix/include/*")
set(listed ${public} ${internal})
foreach(header IN LISTS installed)
  if(NOT header IN_LIST listed)
    problem("${header} is installed but in no module's HDRS or INTERNAL_HDRS")
  endif()
endforeach()
foreach(header IN LISTS listed)
  if(NOT header IN_LIST installed)
    problem("${header} is listed but not installed")
  endif()
  if(header MATCHES "(_test|test_support|/testing/)")
    problem("${header} is test code: it belongs in tests/support/, not in the installed headers")
  endif()
endforeach()

# What the installed headers include of cutoff's own.
set(included "")
foreach(header IN LISTS installed)
  file(STRINGS "${work}/prefix/include/${header}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    if(target MATCHES "^tests/")
      problem("${header} includes test support ${target}")
    elseif(target MATCHES "^cutoff/")
      if(NOT target IN_LIST installed)
        problem("${header} includes ${target}, which is not installed")
      endif()
      list(APPEND included "${target}")
    endif()
  endforeach()
endforeach()
foreach(header IN LISTS internal)
  if(NOT header IN_LIST included)
    problem("${header} is in INTERNAL_HDRS but no installed header includes it: drop it from the list")
  endif()
endforeach()

# Every header in the source tree is classified.
file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/cutoff/*.hpp")
set(classified ${public} ${internal} ${private})
foreach(header IN LISTS sources)
  if(NOT header IN_LIST classified AND NOT header MATCHES "/internal/")
    problem("${header} is in no module's HDRS or PRIVATE_HDRS: list it in HDRS if users include it, \
in PRIVATE_HDRS if only the module's sources do (or move it into an internal/ directory)")
  endif()
endforeach()

list(LENGTH installed count)
if(problems)
  message(FATAL_ERROR "the installed headers do not match the modules' lists:${problems}")
endif()
message(STATUS "${count} installed headers, each listed and each including only installed headers")
file(REMOVE_RECURSE "${work}")
