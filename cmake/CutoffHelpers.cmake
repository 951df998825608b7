# Helpers shared by every module, app, test and benchmark target.

# Warnings and sanitizers for a target of ours.
function(cutoff_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wnon-virtual-dtor
                         -Wno-missing-field-initializers)  # designated initializers keep defaults
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wshadow=local)
  endif()
  if(CUTOFF_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CUTOFF_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${CUTOFF_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${CUTOFF_SANITIZE})
    if(CUTOFF_SANITIZE MATCHES "thread")
      # Asio uses std::atomic_thread_fence, which TSan does not model; g++ warns about each use.
      target_compile_options(${target} PRIVATE -Wno-tsan)
    endif()
    if(CUTOFF_SANITIZE MATCHES "undefined")
      target_compile_options(${target} PRIVATE -fno-sanitize-recover=undefined)
      if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        # clang 14 fails to emit coroutines instrumented by UBSan's `function` check together
        # with fuzzer coverage ("Cannot represent a difference across sections").
        target_compile_options(${target} PRIVATE -fno-sanitize=function)
      endif()
    endif()
  endif()
endfunction()

# cutoff_add_module(NAME HDRS ... [INTERNAL_HDRS ...] [PRIVATE_HDRS ...] SOURCES ... [DEPS ...]
#                   [TESTS ...] [TEST_DEPS ...] [TEST_PROPERTIES ...])
# Builds library cutoff_<NAME> (alias cutoff::<NAME>) from sources under cutoff/<NAME>: static,
# or shared with BUILD_SHARED_LIBS=ON.
# HDRS are its public headers: the ones installed, and the only ones users include.
# INTERNAL_HDRS are headers in internal/ that public headers include (their inline code needs
# them): installed too, but not API. PRIVATE_HDRS are headers outside internal/ that only the
# module's sources include. A header in an internal/ directory is private unless listed in
# INTERNAL_HDRS. `install.public_headers` checks the lists against the tree and the install.
# TESTS are collected into one test binary per module, <NAME>_test, which links TEST_DEPS and
# cutoff_test_support (tests/support); TEST_PROPERTIES are CTest properties for each of its
# tests (e.g. FIXTURES_REQUIRED postgres).
set_property(GLOBAL PROPERTY CUTOFF_MODULES "")
set_property(GLOBAL PROPERTY CUTOFF_HEADER_MANIFEST "")
function(cutoff_add_module name)
  cmake_parse_arguments(ARG "" "" "HDRS;INTERNAL_HDRS;PRIVATE_HDRS;SOURCES;DEPS;TESTS;TEST_DEPS;TEST_PROPERTIES"
                        ${ARGN})
  set(target cutoff_${name})
  add_library(${target} ${ARG_SOURCES})
  add_library(cutoff::${name} ALIAS ${target})
  # Static or shared, the objects compile with the same command (position-independent, and no
  # <target>_EXPORTS define, which nothing reads: symbols have default visibility), so a
  # shared build of the same sources is all ccache hits.
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME cutoff_${name}
                                             POSITION_INDEPENDENT_CODE ON DEFINE_SYMBOL ""
                                             VERSION ${PROJECT_VERSION}
                                             SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
                                             INSTALL_RPATH $ORIGIN)
  target_sources(${target} PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR}
                                  FILES ${ARG_HDRS} ${ARG_INTERNAL_HDRS})
  target_sources(${target} PRIVATE ${ARG_PRIVATE_HDRS})
  foreach(kind IN ITEMS HDRS INTERNAL_HDRS PRIVATE_HDRS)
    foreach(header IN LISTS ARG_${kind})
      cmake_path(ABSOLUTE_PATH header)
      cmake_path(RELATIVE_PATH header BASE_DIRECTORY ${PROJECT_SOURCE_DIR})
      set_property(GLOBAL APPEND PROPERTY CUTOFF_HEADER_MANIFEST "${kind} ${header}")
    endforeach()
  endforeach()
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                              $<INSTALL_INTERFACE:include>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  cutoff_target_defaults(${target})
  if(CUTOFF_SANITIZE)
    # A sanitized library needs the sanitizer runtime wherever it is linked.
    target_link_options(${target} INTERFACE -fsanitize=${CUTOFF_SANITIZE})
  endif()
  set_property(GLOBAL APPEND PROPERTY CUTOFF_MODULES ${name})
  set_property(GLOBAL PROPERTY CUTOFF_MODULE_${name}_TESTS ${ARG_TESTS})
  set_property(GLOBAL PROPERTY CUTOFF_MODULE_${name}_TEST_DEPS ${ARG_TEST_DEPS})
  set_property(GLOBAL PROPERTY CUTOFF_MODULE_${name}_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set_property(GLOBAL PROPERTY CUTOFF_MODULE_${name}_TEST_PROPERTIES ${ARG_TEST_PROPERTIES})
endfunction()

# One GoogleTest binary per module; each test case is its own CTest test.
function(cutoff_add_module_tests)
  get_property(modules GLOBAL PROPERTY CUTOFF_MODULES)
  foreach(name IN LISTS modules)
    get_property(tests GLOBAL PROPERTY CUTOFF_MODULE_${name}_TESTS)
    get_property(deps GLOBAL PROPERTY CUTOFF_MODULE_${name}_TEST_DEPS)
    get_property(dir GLOBAL PROPERTY CUTOFF_MODULE_${name}_DIR)
    get_property(properties GLOBAL PROPERTY CUTOFF_MODULE_${name}_TEST_PROPERTIES)
    if(NOT tests)
      continue()
    endif()
    list(TRANSFORM tests PREPEND "${dir}/")
    add_executable(${name}_test ${tests})
    target_link_libraries(${name}_test PRIVATE cutoff::${name} ${deps} cutoff_test_support
                                               GTest::gmock GTest::gtest_main)
    cutoff_target_defaults(${name}_test)
    gtest_discover_tests(${name}_test DISCOVERY_MODE PRE_TEST TEST_PREFIX "${name}." PROPERTIES TIMEOUT 120 ${properties})
  endforeach()
endfunction()
