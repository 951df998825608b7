# Installs the library so that consumers can `find_package(cutoff CONFIG)` and link
# `cutoff::cutoff` (everything) or one module, e.g. `cutoff::core`, or take the flags of
# `pkg-config cutoff`. Static, or shared with BUILD_SHARED_LIBS=ON.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(modules GLOBAL PROPERTY CUTOFF_MODULES)
set(module_targets "")
foreach(name IN LISTS modules)
  list(APPEND module_targets cutoff_${name})
endforeach()

add_library(cutoff_all INTERFACE)
set_target_properties(cutoff_all PROPERTIES EXPORT_NAME cutoff)
target_link_libraries(cutoff_all INTERFACE ${module_targets})
add_library(cutoff::cutoff ALIAS cutoff_all)

# Headers: each module's HDRS and INTERNAL_HDRS (cutoff_add_module), nothing else.
install(TARGETS ${module_targets} cutoff_all EXPORT cutoffTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The lists, for the test that checks them against the tree and the install.
get_property(header_manifest GLOBAL PROPERTY CUTOFF_HEADER_MANIFEST)
list(JOIN header_manifest "\n" header_manifest)
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/cutoff-headers.txt" "${header_manifest}\n")
if(TARGET cutoff)
  install(TARGETS cutoff RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT cutoffTargets NAMESPACE cutoff:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cutoff)

# pkg-config: cutoff.pc (every module) beside the CMake package, with paths relative to the
# file. Boost.JSON appears in public headers, so its library is in Libs. SQLite, libpq and zlib
# do not: a shared cutoff brings them itself (Requires.private), a static one needs them
# linked (Requires).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(pc_prefix "${CMAKE_INSTALL_PREFIX}")
  set(pc_libdir "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(pc_includedir "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH pc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" pc_up "${pc_up}")
  set(pc_prefix "\${pcfiledir}/${pc_up}")
  set(pc_libdir "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(pc_includedir "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(pc_cflags "")
foreach(dir IN LISTS Boost_INCLUDE_DIRS)
  if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    string(APPEND pc_cflags " -I${dir}")
  endif()
endforeach()
set(pc_libs "")
set(pc_link_order ${modules})
list(REVERSE pc_link_order)  # a module before the modules it uses, for static linking
foreach(name IN LISTS pc_link_order)
  string(APPEND pc_libs " -lcutoff_${name}")
endforeach()
find_package(Boost 1.81 CONFIG REQUIRED COMPONENTS json)  # Boost::json, here too
get_target_property(boost_json_library Boost::json LOCATION)
get_filename_component(boost_json_dir "${boost_json_library}" DIRECTORY)
if(NOT boost_json_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
  string(APPEND pc_libs " -L${boost_json_dir}")
endif()
string(APPEND pc_libs " -lboost_json")
if(CUTOFF_SANITIZE)
  string(APPEND pc_libs " -fsanitize=${CUTOFF_SANITIZE}")
endif()
set(pc_libs_private "")
if(CMAKE_THREAD_LIBS_INIT)  # empty where threads are in libc (glibc 2.34 and later)
  set(pc_libs_private " ${CMAKE_THREAD_LIBS_INIT}")
endif()
set(pc_requires sqlite3 libpq openssl grpc++)
if(TARGET cutoff_graphql_graphiql)
  list(APPEND pc_requires zlib)
endif()
list(JOIN pc_requires " " pc_requires)
if(BUILD_SHARED_LIBS)
  set(pc_requires_field Requires.private)
else()
  set(pc_requires_field Requires)
  string(APPEND pc_libs "${pc_libs_private}")
  set(pc_libs_private "")
endif()
configure_file(cmake/cutoff.pc.in "${CMAKE_CURRENT_BINARY_DIR}/cutoff.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/cutoff.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

configure_package_config_file(cmake/cutoffConfig.cmake.in "${CMAKE_CURRENT_BINARY_DIR}/cutoffConfig.cmake"
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cutoff)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/cutoffConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/cutoffConfig.cmake" "${CMAKE_CURRENT_BINARY_DIR}/cutoffConfigVersion.cmake"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cutoff)
