# Installs headers, library, CLI, a CMake package (find_package(safetensors)) and safetensors.pc.
include(CMakePackageConfigHelpers)

install(TARGETS safetensors EXPORT safetensors-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The converters' and pipelines' headers come with their library (component formats, below);
# the remote reader's stay out: safetensors::remote is not part of the installed package yet.
install(DIRECTORY include/safetensors DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN formats EXCLUDE
  PATTERN pipeline EXCLUDE PATTERN remote EXCLUDE)
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

# safetensors.pc finds its prefix from its own folder (${pcfiledir}), so the installed tree can
# move. A static library's dependencies go in Requires/Libs, not the .private fields: plain
# `pkg-config --libs` must be enough to link.
set(SAFETENSORS_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${SAFETENSORS_PC_DIR}")
  message(FATAL_ERROR "safetensors.pc needs a relative CMAKE_INSTALL_LIBDIR, not ${CMAKE_INSTALL_LIBDIR}")
endif()
file(RELATIVE_PATH SAFETENSORS_PC_TO_PREFIX "/prefix/${SAFETENSORS_PC_DIR}" "/prefix")
string(REGEX REPLACE "/$" "" SAFETENSORS_PC_TO_PREFIX "${SAFETENSORS_PC_TO_PREFIX}")
get_target_property(safetensors_type safetensors TYPE)
if(safetensors_type STREQUAL "STATIC_LIBRARY")
  set(SAFETENSORS_PC_REQUIRES "Requires")
  set(SAFETENSORS_PC_THREADS "-pthread")
else()
  set(SAFETENSORS_PC_REQUIRES "Requires.private")
  set(SAFETENSORS_PC_THREADS "")
endif()
configure_file(cmake/safetensors.pc.in ${CMAKE_CURRENT_BINARY_DIR}/safetensors.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/safetensors.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Component formats: the converters and pipelines, safetensors::formats
# (find_package(safetensors COMPONENTS formats)) and safetensors_formats.pc, when they were built.
if(TARGET safetensors_formats)
  install(TARGETS safetensors_formats EXPORT safetensors-formats-targets COMPONENT formats
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY include/safetensors/formats include/safetensors/pipeline COMPONENT formats
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/safetensors)
  install(EXPORT safetensors-formats-targets NAMESPACE safetensors:: COMPONENT formats
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/safetensors)
  get_target_property(safetensors_formats_type safetensors_formats TYPE)
  # Static: minizip and zlib are linked by the consumer, so plain `pkg-config --libs` names them.
  if(safetensors_formats_type STREQUAL "STATIC_LIBRARY")
    set(SAFETENSORS_FORMATS_PC_REQUIRES "Requires: safetensors minizip zlib")
  else()
    set(SAFETENSORS_FORMATS_PC_REQUIRES "Requires: safetensors\nRequires.private: minizip zlib")
  endif()
  configure_file(cmake/safetensors_formats.pc.in ${CMAKE_CURRENT_BINARY_DIR}/safetensors_formats.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/safetensors_formats.pc COMPONENT formats
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
