# Installs headers, library, CLI, a CMake package (find_package(safetensors)) and safetensors.pc,
# and the components, each with its targets file and .pc.
include(CMakePackageConfigHelpers)

install(TARGETS safetensors EXPORT safetensors-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The components' headers come with their libraries (below); the remote reader's stay out:
# safetensors::remote is not part of the installed package yet.
set(SAFETENSORS_COMPONENT_HEADERS_mlx mlx_quant.h mlx_checkpoint.h)
set(SAFETENSORS_COMPONENT_HEADERS_stats stats.h)
set(SAFETENSORS_COMPONENT_HEADERS_sha256 sha256.h)
set(component_header_excludes "")
foreach(header IN LISTS SAFETENSORS_COMPONENT_HEADERS_mlx SAFETENSORS_COMPONENT_HEADERS_stats
                        SAFETENSORS_COMPONENT_HEADERS_sha256)
  list(APPEND component_header_excludes PATTERN ${header} EXCLUDE)
endforeach()
install(DIRECTORY include/safetensors DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN formats EXCLUDE
  PATTERN pipeline EXCLUDE PATTERN remote EXCLUDE ${component_header_excludes})
if(TARGET safetensors_cli)
  install(TARGETS safetensors_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The CLI's HTTP client, loaded at its first URL (tools/cli/remote_module.cpp looks here).
  if(TARGET safetensors_remote_module)
    install(TARGETS safetensors_remote_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/safetensors)
  endif()
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

# Components mlx, stats and sha256: each its library, headers, export set
# (safetensors-<name>-targets.cmake, for find_package(safetensors COMPONENTS <name>)) and
# safetensors_<name>.pc. Their private dependencies are the consumer's to link when the
# library is static (Requires), and the library's own when it is shared (Requires.private).
set(SAFETENSORS_COMPONENT_DESCRIPTION_mlx "MLX affine/mxfp4/mxfp8/nvfp4 quantization and MLX checkpoints")
set(SAFETENSORS_COMPONENT_PRIVATE_mlx "simdjson fmt")
set(SAFETENSORS_COMPONENT_DESCRIPTION_stats "One-pass tensor statistics")
set(SAFETENSORS_COMPONENT_PRIVATE_stats "")
set(SAFETENSORS_COMPONENT_DESCRIPTION_sha256 "SHA-256 over OpenSSL's libcrypto, and the hasher verify_checkpoint takes")
set(SAFETENSORS_COMPONENT_PRIVATE_sha256 "libcrypto")
foreach(component IN ITEMS mlx stats sha256)
  if(NOT TARGET safetensors_${component})
    continue()
  endif()
  install(TARGETS safetensors_${component} EXPORT safetensors-${component}-targets COMPONENT ${component}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  list(TRANSFORM SAFETENSORS_COMPONENT_HEADERS_${component} PREPEND include/safetensors/ OUTPUT_VARIABLE headers)
  install(FILES ${headers} COMPONENT ${component} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/safetensors)
  install(EXPORT safetensors-${component}-targets NAMESPACE safetensors:: COMPONENT ${component}
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/safetensors)
  set(SAFETENSORS_COMPONENT_NAME ${component})
  set(SAFETENSORS_COMPONENT_DESCRIPTION "${SAFETENSORS_COMPONENT_DESCRIPTION_${component}}")
  get_target_property(component_type safetensors_${component} TYPE)
  set(SAFETENSORS_COMPONENT_REQUIRES "Requires: safetensors")
  if(SAFETENSORS_COMPONENT_PRIVATE_${component} STREQUAL "")
  elseif(component_type STREQUAL "STATIC_LIBRARY")
    string(APPEND SAFETENSORS_COMPONENT_REQUIRES " ${SAFETENSORS_COMPONENT_PRIVATE_${component}}")
  else()
    string(APPEND SAFETENSORS_COMPONENT_REQUIRES "\nRequires.private: ${SAFETENSORS_COMPONENT_PRIVATE_${component}}")
  endif()
  # mlx's worker threads: -pthread for a static library, as safetensors.pc's.
  set(SAFETENSORS_COMPONENT_LIBS "")
  if(component STREQUAL "mlx" AND component_type STREQUAL "STATIC_LIBRARY")
    set(SAFETENSORS_COMPONENT_LIBS " -pthread")
  endif()
  configure_file(cmake/safetensors_component.pc.in ${CMAKE_CURRENT_BINARY_DIR}/safetensors_${component}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/safetensors_${component}.pc COMPONENT ${component}
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# Components formats (the PyTorch, NumPy and GGUF readers and writers, over the core with zlib
# and minizip) and pipeline (over formats, with mlx public: pipeline/mlx_rewrite.h uses its
# types, and sha256 private): each its library, headers, export set and .pc, when built. A
# static library's private dependencies are the consumer's to link (Requires).
set(SAFETENSORS_LIBRARY_DESCRIPTION_formats "Readers and writers of PyTorch, NumPy and GGUF files")
set(SAFETENSORS_LIBRARY_PUBLIC_formats "safetensors")
set(SAFETENSORS_LIBRARY_PRIVATE_formats "minizip zlib")
set(SAFETENSORS_LIBRARY_DESCRIPTION_pipeline "Conversion pipelines between SafeTensors, PyTorch, NumPy and GGUF: convert, diff, checksum, MLX rewrites")
set(SAFETENSORS_LIBRARY_PUBLIC_pipeline "safetensors safetensors_formats safetensors_mlx")
set(SAFETENSORS_LIBRARY_PRIVATE_pipeline "safetensors_sha256")
foreach(component IN ITEMS formats pipeline)
  if(NOT TARGET safetensors_${component})
    continue()
  endif()
  install(TARGETS safetensors_${component} EXPORT safetensors-${component}-targets COMPONENT ${component}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY include/safetensors/${component} COMPONENT ${component}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/safetensors)
  install(EXPORT safetensors-${component}-targets NAMESPACE safetensors:: COMPONENT ${component}
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/safetensors)
  set(SAFETENSORS_COMPONENT_NAME ${component})
  set(SAFETENSORS_COMPONENT_DESCRIPTION "${SAFETENSORS_LIBRARY_DESCRIPTION_${component}}")
  get_target_property(component_type safetensors_${component} TYPE)
  if(component_type STREQUAL "STATIC_LIBRARY")
    set(SAFETENSORS_COMPONENT_REQUIRES
      "Requires: ${SAFETENSORS_LIBRARY_PUBLIC_${component}} ${SAFETENSORS_LIBRARY_PRIVATE_${component}}")
  else()
    set(SAFETENSORS_COMPONENT_REQUIRES "Requires: ${SAFETENSORS_LIBRARY_PUBLIC_${component}}\nRequires.private: ${SAFETENSORS_LIBRARY_PRIVATE_${component}}")
  endif()
  set(SAFETENSORS_COMPONENT_LIBS "")
  configure_file(cmake/safetensors_component.pc.in ${CMAKE_CURRENT_BINARY_DIR}/safetensors_${component}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/safetensors_${component}.pc COMPONENT ${component}
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
