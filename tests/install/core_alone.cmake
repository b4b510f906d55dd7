# Configures the core alone (every component, front end and developer target off) and fails if
# CMake looked for OpenSSL: the core needs only simdjson, fmt and threads; libcrypto is
# component sha256's.
#   cmake -DSOURCE_DIR= -DWORK_DIR= -DGENERATOR= -P core_alone.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR}
                        -DSAFETENSORS_BUILD_MLX=OFF -DSAFETENSORS_BUILD_STATS=OFF -DSAFETENSORS_BUILD_SHA256=OFF
                        -DSAFETENSORS_BUILD_FORMATS=OFF -DSAFETENSORS_BUILD_PIPELINE=OFF -DSAFETENSORS_BUILD_CLI=OFF -DSAFETENSORS_BUILD_C_API=OFF
                        -DSAFETENSORS_BUILD_PYTHON=OFF -DSAFETENSORS_BUILD_REMOTE=OFF -DSAFETENSORS_BUILD_TESTS=OFF
                        -DSAFETENSORS_BUILD_BENCH=OFF -DSAFETENSORS_BUILD_FUZZ=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "configuring the core alone failed: ${out}${err}")
endif()
file(STRINGS ${WORK_DIR}/CMakeCache.txt openssl_entries REGEX "^OPENSSL_|^OpenSSL_")
if(openssl_entries)
  message(FATAL_ERROR "configuring the core alone looked for OpenSSL: ${openssl_entries}")
endif()
if(NOT EXISTS ${WORK_DIR}/build.ninja AND NOT EXISTS ${WORK_DIR}/Makefile)
  message(FATAL_ERROR "configuring the core alone generated no build")
endif()
message(STATUS "the core alone configures without OpenSSL")
