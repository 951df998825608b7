# Installs the library so that consumers can `find_package(cutoff CONFIG)` and link
# `cutoff::cutoff` (everything) or one module, e.g. `cutoff::core`.
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

configure_package_config_file(cmake/cutoffConfig.cmake.in "${CMAKE_CURRENT_BINARY_DIR}/cutoffConfig.cmake"
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cutoff)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/cutoffConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/cutoffConfig.cmake" "${CMAKE_CURRENT_BINARY_DIR}/cutoffConfigVersion.cmake"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cutoff)
