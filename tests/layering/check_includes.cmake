# Layering rule checked by ctest: the sources under DIR include, in quotes, only public
# headers ("safetensors/...") and the private headers ALLOWED names (a regular expression of
# prefixes such as "formats/" or "(header|json)/") or of their own folder (no slash); and no
# public header FORBIDDEN matches (a component's headers that this library must not use).
# Usage: cmake -DDIR=<folder> -DALLOWED=<regex> [-DFORBIDDEN=<regex>] -P check_includes.cmake
file(GLOB_RECURSE sources "${DIR}/*.cpp" "${DIR}/*.h")
set(violations "")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" included "${line}")
    if(included MATCHES "^safetensors/")
      if(FORBIDDEN AND included MATCHES "^safetensors/${FORBIDDEN}")
        file(RELATIVE_PATH shown "${DIR}" "${source}")
        list(APPEND violations "${shown}: #include \"${included}\" (a library this one must not use)")
      endif()
    elseif(NOT included MATCHES "^${ALLOWED}" AND included MATCHES "/")
      file(RELATIVE_PATH shown "${DIR}" "${source}")
      list(APPEND violations "${shown}: #include \"${included}\"")
    endif()
  endforeach()
endforeach()
if(violations)
  list(JOIN violations "\n  " listed)
  message(FATAL_ERROR "headers included from ${DIR} against the layering:\n  ${listed}")
endif()
list(LENGTH sources count)
message(STATUS "${count} files of ${DIR} include only public headers and ${ALLOWED}")
