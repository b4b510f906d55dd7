cmake_minimum_required(VERSION 3.22)
# The C API's consumers against the installed, moved package: the C99 program (c_consumer/)
# built with find_package(safetensors COMPONENTS c) and with nothing but
# `pkg-config --cflags --libs safetensors_c`, each run on the conformance corpus; then the
# Python ctypes consumer loading the installed libsafetensors_c.so.
#   cmake -DBUILD_DIR= -DSOURCE_DIR= -DWORK_DIR= -DCC= -DCORPUS= [-DPYTHON=] [-DFLAGS=-fsanitize=...] -P run_c.cmake
file(REMOVE_RECURSE ${WORK_DIR})
set(INSTALLED ${WORK_DIR}/installed)
set(PREFIX ${WORK_DIR}/moved)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${INSTALLED} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
file(RENAME ${INSTALLED} ${PREFIX})
file(GLOB_RECURSE libraries ${PREFIX}/*/libsafetensors_c.so)
list(LENGTH libraries library_count)
if(NOT library_count EQUAL 1)
  message(FATAL_ERROR "expected one installed libsafetensors_c.so, found: ${libraries}")
endif()
get_filename_component(libdir ${libraries} DIRECTORY)
if(NOT EXISTS ${PREFIX}/include/safetensors/safetensors_c.h)
  message(FATAL_ERROR "safetensors_c.h was not installed")
endif()
file(MAKE_DIRECTORY ${WORK_DIR}/scratch)

function(run_consumer)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR NOT out MATCHES "consumer ok: 149 files")
    message(FATAL_ERROR "${ARGN} failed (${rc}): ${out}${err}")
  endif()
  message(STATUS "${out}")
endfunction()

# 1. CMake package, component c.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/c_consumer -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_C_COMPILER=${CC} "-DCMAKE_C_FLAGS=${FLAGS}"
                        RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "C consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "C consumer build failed")
endif()
run_consumer(${WORK_DIR}/build/c_consumer ${CORPUS} ${WORK_DIR}/scratch)

# 2. pkg-config safetensors_c, found by PKG_CONFIG_PATH only.
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs safetensors_c RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(rc)
  message(FATAL_ERROR "pkg-config safetensors_c failed: ${err}")
endif()
string(FIND "${flags}" "${PREFIX}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "pkg-config paths do not point into the moved prefix ${PREFIX}: ${flags}")
endif()
separate_arguments(flag_list UNIX_COMMAND "${flags} ${FLAGS}")
execute_process(COMMAND ${CC} -std=c99 -Wall -Wextra -Werror -pedantic ${SOURCE_DIR}/tests/install/c_consumer/main.c
                        ${flag_list} -o ${WORK_DIR}/c_consumer-pc
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "C consumer build through pkg-config failed (${CC} ... ${flags}): ${err}")
endif()
run_consumer(${WORK_DIR}/c_consumer-pc ${CORPUS} ${WORK_DIR}/scratch)

# 3. Python ctypes, loading the installed library by path.
if(PYTHON)
  run_consumer(${PYTHON} ${SOURCE_DIR}/tests/capi/ctypes_consumer.py --library ${libraries} --corpus ${CORPUS}
               --scratch ${WORK_DIR}/scratch)
endif()
message(STATUS "C API consumers ok (find_package, pkg-config, ctypes)")
