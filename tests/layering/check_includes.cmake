# Layering rule checked by ctest: the sources under DIR include, in quotes, only public
# headers ("safetensors/...") and headers of their own component (ALLOWED, a prefix such as
# "formats/") or of their own folder (no slash), never a private header of the core
# (platform/, writer/, checkpoint/, ...).
# Usage: cmake -DDIR=<folder> -DALLOWED=<prefix> -P check_includes.cmake
file(GLOB_RECURSE sources "${DIR}/*.cpp" "${DIR}/*.h")
set(violations "")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" included "${line}")
    if(NOT included MATCHES "^safetensors/" AND NOT included MATCHES "^${ALLOWED}" AND included MATCHES "/")
      file(RELATIVE_PATH shown "${DIR}" "${source}")
      list(APPEND violations "${shown}: #include \"${included}\"")
    endif()
  endforeach()
endforeach()
if(violations)
  list(JOIN violations "\n  " listed)
  message(FATAL_ERROR "private headers of another component included from ${DIR}:\n  ${listed}")
endif()
list(LENGTH sources count)
message(STATUS "${count} files of ${DIR} include only public headers and ${ALLOWED}")
