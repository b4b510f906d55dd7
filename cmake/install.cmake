# Installs headers, library, CLI, a CMake package (find_package(safetensors)) and safetensors.pc.
include(CMakePackageConfigHelpers)

install(TARGETS safetensors EXPORT safetensors-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/safetensors DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET safetensors_cli)
  install(TARGETS safetensors_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT safetensors-targets NAMESPACE safetensors::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/safetensors)
configure_package_config_file(cmake/safetensors-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/safetensors-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/safetensors)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/safetensors-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/safetensors-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/safetensors-config-version.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/safetensors)

configure_file(cmake/safetensors.pc.in ${CMAKE_CURRENT_BINARY_DIR}/safetensors.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/safetensors.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
