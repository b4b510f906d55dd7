# Installs the built project into a scratch prefix, moves the prefix (both package files must
# be relocatable), then builds and runs a tiny consumer twice: with find_package(safetensors),
# and with nothing but `pkg-config --cflags --libs safetensors` (no --static).
file(REMOVE_RECURSE ${WORK_DIR})
set(INSTALLED ${WORK_DIR}/installed)
set(PREFIX ${WORK_DIR}/moved)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${INSTALLED} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
file(RENAME ${INSTALLED} ${PREFIX})
if(NOT EXISTS ${PREFIX}/bin/safetensors)
  message(FATAL_ERROR "the CLI was not installed")
endif()
# Only the core library is packaged: no header of the (uninstalled) converters' library.
if(EXISTS ${PREFIX}/include/safetensors/formats)
  message(FATAL_ERROR "the converters' headers were installed without their library")
endif()

function(run_consumer program)
  execute_process(COMMAND ${program} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR NOT out MATCHES "round trip ok")
    message(FATAL_ERROR "${program} failed (${rc}): ${out}${err}")
  endif()
endfunction()

# 1. CMake package.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${PREFIX} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed")
endif()
run_consumer(${WORK_DIR}/build/consumer)

# 2. pkg-config, found by PKG_CONFIG_PATH only: the .pc file locates the moved prefix itself.
file(GLOB_RECURSE pc_files ${PREFIX}/*/safetensors.pc)
list(LENGTH pc_files pc_count)
if(NOT pc_count EQUAL 1)
  message(FATAL_ERROR "expected one installed safetensors.pc, found: ${pc_files}")
endif()
get_filename_component(pc_dir ${pc_files} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --cflags --libs safetensors RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(rc)
  message(FATAL_ERROR "pkg-config failed: ${err}")
endif()
string(FIND "${flags}" "${PREFIX}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "pkg-config paths do not point into the moved prefix ${PREFIX}: ${flags}")
endif()
separate_arguments(flag_list UNIX_COMMAND "${flags}")
execute_process(COMMAND ${CXX} ${SOURCE_DIR}/tests/install/consumer/main.cpp ${flag_list} -o ${WORK_DIR}/consumer-pc
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "consumer build through pkg-config failed (${CXX} ... ${flags}): ${err}")
endif()
run_consumer(${WORK_DIR}/consumer-pc)
message(STATUS "install consumer ok (find_package and pkg-config)")
