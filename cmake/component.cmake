# safetensors_add_component(<name> SOURCES <file>... [STATIC] [PUBLIC <dep>...] [PRIVATE <dep>...])
# A library over the core, as mlx, stats, sha256, formats and remote are: target
# safetensors_<name> with the alias and export name safetensors::<name>, the public headers of
# include/, the component's own private headers from src/ (a test checks that it includes no
# private header of the core: tests/layering), C++20, position-independent so that a shared
# build can link it, and the project's warnings. STATIC builds it static even with
# BUILD_SHARED_LIBS=ON (for a part that is not installed).
function(safetensors_add_component name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "STATIC" "" "SOURCES;PUBLIC;PRIVATE")
  set(target safetensors_${name})
  if(arg_STATIC)
    add_library(${target} STATIC ${arg_SOURCES})
  else()
    add_library(${target} ${arg_SOURCES})
  endif()
  add_library(safetensors::${name} ALIAS ${target})
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target}
    PUBLIC safetensors::safetensors ${arg_PUBLIC}
    PRIVATE ${arg_PRIVATE} $<BUILD_INTERFACE:safetensors_build_flags>)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME ${name})
  safetensors_precompile_common_headers(${target})
endfunction()

# With SAFETENSORS_PCH, a library's sources share one precompiled header of what nearly all of
# them include, when each file is compiled alone (scripts/portable, scripts/asan): about a fifth
# of a clean build's compile time (measured on formats). Not for a library of a few files, and not
# in unity builds, where each batch of eight parses the headers once and building the header costs
# more than it saves (measured: the core 57 -> 50 CPU-s, formats + pipeline + mlx 109 -> 90).
function(safetensors_precompile_common_headers target)
  get_target_property(sources ${target} SOURCES)
  list(LENGTH sources count)
  if(SAFETENSORS_PCH AND NOT SAFETENSORS_UNITY_BUILD AND count GREATER_EQUAL 8)
    target_precompile_headers(${target} PRIVATE <algorithm> <cstddef> <cstdint> <cstring> <functional>
      <memory> <optional> <span> <string> <string_view> <vector> <fmt/format.h>
      <safetensors/error.h> <safetensors/header.h>)
  endif()
endfunction()
