cmake_minimum_required(VERSION 3.22)
# Every ```c block of docs/c-api.md is a whole C99 program: it must compile with
# -std=c99 -Wall -Wextra -Werror -pedantic against safetensors_c.h, link with
# libsafetensors_c, and exit 0 when run in a scratch directory.
#   cmake -DCC= [-DFLAGS="-fsanitize=..."] -DPAGE= -DINCLUDE= -DLIBRARY= -DWORK_DIR= -P doc_examples.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(READ ${PAGE} page)  # whole text: C code's semicolons would split a CMake list of lines
get_filename_component(libdir ${LIBRARY} DIRECTORY)
separate_arguments(extra_flags UNIX_COMMAND "${FLAGS}")
set(blocks 0)
while(TRUE)
  string(FIND "${page}" "\n```c\n" open)
  if(open EQUAL -1)
    break()
  endif()
  math(EXPR open "${open} + 6")
  string(SUBSTRING "${page}" ${open} -1 page)
  string(FIND "${page}" "\n```\n" close)
  if(close EQUAL -1)
    message(FATAL_ERROR "docs/c-api.md: an unclosed ```c block")
  endif()
  math(EXPR close "${close} + 1")
  string(SUBSTRING "${page}" 0 ${close} text)
  string(SUBSTRING "${page}" ${close} -1 page)
  math(EXPR blocks "${blocks} + 1")
  set(source ${WORK_DIR}/example_${blocks}.c)
  file(WRITE ${source} "${text}")
  execute_process(COMMAND ${CC} -std=c99 -Wall -Wextra -Werror -pedantic ${extra_flags} -I${INCLUDE} ${source} ${LIBRARY}
                          -Wl,-rpath,${libdir} -o ${WORK_DIR}/example_${blocks}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "docs/c-api.md example ${blocks} does not compile cleanly:\n${err}")
  endif()
  execute_process(COMMAND ${WORK_DIR}/example_${blocks} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "docs/c-api.md example ${blocks} exited with ${rc}:\n${out}${err}")
  endif()
  message(STATUS "example ${blocks}:\n${out}")
endwhile()
if(blocks LESS 1)
  message(FATAL_ERROR "docs/c-api.md has no ```c example")
endif()
