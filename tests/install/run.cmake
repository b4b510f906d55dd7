# Installs the built project into a scratch prefix, moves the prefix (both package files must
# be relocatable), then builds and runs tiny consumers of the core and of each component
# (mlx, stats, sha256, formats, pipeline) twice: with find_package(safetensors [COMPONENTS name]), and
# with nothing but `pkg-config --cflags --libs safetensors[_name]` (no --static). Checks that
# the core links no libcrypto (only component sha256 does), runs the installed CLI from the
# moved prefix (a shared build must find its libraries through its RUNPATH) and checks that
# find_package refuses an unknown component and components that are missing.
#   cmake -DSOURCE_DIR= -DBUILD_DIR= -DWORK_DIR= -DCXX= [-DSHARED=ON] -P run.cmake
file(REMOVE_RECURSE ${WORK_DIR})
set(INSTALLED ${WORK_DIR}/installed)
set(PREFIX ${WORK_DIR}/moved)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${INSTALLED} RESULT_VARIABLE rc
                OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
file(RENAME ${INSTALLED} ${PREFIX})
if(NOT EXISTS ${PREFIX}/bin/safetensors)
  message(FATAL_ERROR "the CLI was not installed")
endif()
foreach(header formats/npy.h pipeline/convert.h mlx_quant.h mlx_checkpoint.h stats.h sha256.h hasher.h)
  if(NOT EXISTS ${PREFIX}/include/safetensors/${header})
    message(FATAL_ERROR "the header ${header} was not installed")
  endif()
endforeach()
# The remote reader is not part of the package: none of its headers.
if(EXISTS ${PREFIX}/include/safetensors/remote)
  message(FATAL_ERROR "the remote reader's headers were installed without its library")
endif()
if(SHARED)
  set(library_suffix .so)
else()
  set(library_suffix .a)
endif()
foreach(library safetensors safetensors_mlx safetensors_stats safetensors_sha256 safetensors_formats
                safetensors_pipeline)
  file(GLOB_RECURSE libraries ${PREFIX}/*/lib${library}${library_suffix})
  if(NOT libraries)
    message(FATAL_ERROR "lib${library}${library_suffix} was not installed (SHARED=${SHARED})")
  endif()
endforeach()
get_filename_component(libdir ${libraries} DIRECTORY)
file(MAKE_DIRECTORY ${WORK_DIR}/scratch)

# The core needs only simdjson, fmt and threads: neither its .pc nor its exported targets name
# OpenSSL, and a shared libsafetensors does not load libcrypto. Component sha256 does each, so
# the same checks on it show they can see a dependency.
function(expect_mentions file pattern expected what)
  file(READ ${file} text)
  if(text MATCHES "${pattern}")
    set(found TRUE)
  else()
    set(found FALSE)
  endif()
  if(NOT found STREQUAL expected)
    message(FATAL_ERROR "${what} (${file}):\n${text}")
  endif()
endfunction()
file(GLOB_RECURSE core_pc ${PREFIX}/*/safetensors.pc)
file(GLOB_RECURSE sha256_pc ${PREFIX}/*/safetensors_sha256.pc)
file(GLOB_RECURSE formats_pc ${PREFIX}/*/safetensors_formats.pc)
expect_mentions(${core_pc} "crypto" FALSE "the core's .pc names libcrypto")
# A program that only reads GGUF or npz links neither MLX nor OpenSSL (the pipelines do).
expect_mentions(${formats_pc} "crypto|sha256|mlx" FALSE "component formats' .pc names mlx or libcrypto")
file(GLOB_RECURSE formats_exports ${PREFIX}/*/safetensors-formats-targets*.cmake)
foreach(file IN LISTS formats_exports)
  expect_mentions(${file} "OpenSSL|crypto|safetensors_mlx|safetensors::mlx" FALSE "component formats' exported targets link mlx or OpenSSL")
endforeach()
expect_mentions(${sha256_pc} "libcrypto" TRUE "component sha256's .pc does not name libcrypto")
file(GLOB_RECURSE core_exports ${PREFIX}/*/safetensors-targets*.cmake)
foreach(file IN LISTS core_exports)
  expect_mentions(${file} "OpenSSL|crypto" FALSE "the core's exported targets link OpenSSL")
endforeach()
if(SHARED)
  find_program(READELF readelf REQUIRED)
  function(expect_needs library pattern expected)
    execute_process(COMMAND ${READELF} -d ${libdir}/${library} OUTPUT_FILE ${WORK_DIR}/${library}.dynamic
                    RESULT_VARIABLE rc)
    if(rc)
      message(FATAL_ERROR "readelf -d ${library} failed")
    endif()
    expect_mentions(${WORK_DIR}/${library}.dynamic "NEEDED[^\n]*${pattern}" ${expected} "${library}'s NEEDED entries")
  endfunction()
  expect_needs(libsafetensors.so "libcrypto" FALSE)
  expect_needs(libsafetensors_sha256.so "libcrypto" TRUE)
  expect_needs(libsafetensors_formats.so "libcrypto|libsafetensors_mlx|libsafetensors_sha256" FALSE)
else()
  file(GLOB_RECURSE sha256_exports ${PREFIX}/*/safetensors-sha256-targets.cmake)
  expect_mentions(${sha256_exports} "OpenSSL::Crypto" TRUE "a static sha256 component does not link OpenSSL")
endif()

# Programs run without LD_LIBRARY_PATH: CMake consumers carry an RPATH to the prefix, the CLI
# its install RUNPATH ($ORIGIN/../lib); only the pkg-config builds of a shared install need it.
function(run_program expected)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR (expected AND NOT out MATCHES "${expected}"))
    message(FATAL_ERROR "${ARGN} failed (${rc}): ${out}${err}")
  endif()
endfunction()

run_program("safetensors" ${PREFIX}/bin/safetensors --version)
run_program("" ${PREFIX}/bin/safetensors convert ${SOURCE_DIR}/tests/fixtures/numpy/dtype_f4.npy
            ${WORK_DIR}/scratch/cli.safetensors)
if(NOT EXISTS ${WORK_DIR}/scratch/cli.safetensors)
  message(FATAL_ERROR "the installed CLI's convert wrote nothing")
endif()

# The CLI loads its HTTP client at its first URL: the module is installed when it was built, the
# CLI itself needs no libcurl, and the moved CLI finds the module (a URL of a closed port then
# fails in the HTTP client, not for want of the module).
if(EXISTS ${BUILD_DIR}/tools/cli/safetensors-remote.so)
  file(GLOB_RECURSE remote_module ${PREFIX}/*/safetensors/safetensors-remote.so)
  if(NOT remote_module)
    message(FATAL_ERROR "the CLI's remote module was not installed")
  endif()
  find_program(READELF readelf REQUIRED)
  execute_process(COMMAND ${READELF} -d ${PREFIX}/bin/safetensors OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(rc OR dynamic MATCHES "NEEDED[^\n]*libcurl")
    message(FATAL_ERROR "the installed CLI links libcurl (${rc}):\n${dynamic}")
  endif()
  execute_process(COMMAND ${PREFIX}/bin/safetensors validate --timeout 5 http://127.0.0.1:9/model.safetensors
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc OR "${out}${err}" MATCHES "remote module" OR NOT "${out}${err}" MATCHES "127.0.0.1 port 9")
    message(FATAL_ERROR "the installed CLI did not read a URL through its module (${rc}): ${out}${err}")
  endif()
endif()

# 1. CMake package, each component.
function(build_with_cmake source name)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/${source} -B ${WORK_DIR}/${name}
                          -DCMAKE_PREFIX_PATH=${PREFIX} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                          ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${name} configure failed: ${out}${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/${name} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${name} build failed: ${out}${err}")
  endif()
endfunction()
build_with_cmake(consumers consumers)  # all six, each finding the package in its own folder
run_program("round trip ok" ${WORK_DIR}/consumers/core/consumer)
foreach(component IN ITEMS mlx stats sha256)
  run_program("${component} ok" ${WORK_DIR}/consumers/${component}/${component}_consumer ${WORK_DIR}/scratch)
endforeach()
run_program("npy ok" ${WORK_DIR}/consumers/formats/formats_consumer ${WORK_DIR}/scratch)
run_program("convert ok" ${WORK_DIR}/consumers/pipeline/pipeline_consumer ${WORK_DIR}/scratch)

# 2. pkg-config, found by PKG_CONFIG_PATH only: the .pc files locate the moved prefix themselves.
file(GLOB_RECURSE pc_files ${PREFIX}/*/safetensors.pc)
list(LENGTH pc_files pc_count)
if(NOT pc_count EQUAL 1)
  message(FATAL_ERROR "expected one installed safetensors.pc, found: ${pc_files}")
endif()
get_filename_component(pc_dir ${pc_files} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
function(build_with_pkg_config package source output)
  execute_process(COMMAND pkg-config --cflags --libs ${package} RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config ${package} failed: ${err}")
  endif()
  string(FIND "${flags}" "${PREFIX}/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "pkg-config paths do not point into the moved prefix ${PREFIX}: ${flags}")
  endif()
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  execute_process(COMMAND ${CXX} ${SOURCE_DIR}/tests/install/${source} ${flag_list} -o ${WORK_DIR}/${output}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${output}: build through pkg-config failed (${CXX} ... ${flags}): ${err}")
  endif()
endfunction()
if(SHARED)
  set(with_libdir ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir})
endif()
build_with_pkg_config(safetensors consumer/main.cpp consumer-pc)
run_program("round trip ok" ${with_libdir} ${WORK_DIR}/consumer-pc)
foreach(component IN ITEMS mlx stats sha256)
  build_with_pkg_config(safetensors_${component} component_consumer/${component}.cpp ${component}-consumer-pc)
  run_program("${component} ok" ${with_libdir} ${WORK_DIR}/${component}-consumer-pc ${WORK_DIR}/scratch)
endforeach()
build_with_pkg_config(safetensors_formats formats_consumer/main.cpp formats-consumer-pc)
run_program("npy ok" ${with_libdir} ${WORK_DIR}/formats-consumer-pc ${WORK_DIR}/scratch)
build_with_pkg_config(safetensors_pipeline pipeline_consumer/main.cpp pipeline-consumer-pc)
run_program("convert ok" ${with_libdir} ${WORK_DIR}/pipeline-consumer-pc ${WORK_DIR}/scratch)

# 3. find_package refuses what it cannot give, saying why.
function(expect_refused component reason)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/component -B ${WORK_DIR}/component
                          -DCMAKE_PREFIX_PATH=${PREFIX} -DCOMPONENT=${component}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \n]+" " " err "${err}")  # CMake wraps the message
  if(NOT rc OR NOT err MATCHES "${reason}")
    message(FATAL_ERROR "find_package(safetensors COMPONENTS ${component}) should fail with '${reason}' "
                        "(${rc}): ${out}${err}")
  endif()
endfunction()
expect_refused(nosuch "unknown component 'nosuch'")
# As installed without component sha256: it, and pipeline over it, are refused.
file(GLOB_RECURSE sha256_targets ${PREFIX}/*/safetensors-sha256-targets.cmake)
file(REMOVE ${sha256_targets})
expect_refused(sha256 "component sha256 is not available: this safetensors was built with SAFETENSORS_BUILD_SHA256=OFF")
expect_refused(pipeline "component pipeline is not available: it needs components formats, mlx and sha256")
# As installed by a build with SAFETENSORS_BUILD_FORMATS=OFF: no formats targets file.
file(GLOB_RECURSE formats_targets ${PREFIX}/*/safetensors-formats-targets.cmake)
if(NOT formats_targets)
  message(FATAL_ERROR "no safetensors-formats-targets.cmake was installed")
endif()
file(REMOVE ${formats_targets})
expect_refused(formats "component formats is not available: this safetensors was built with SAFETENSORS_BUILD_FORMATS=OFF")
message(STATUS "install consumers ok (core, mlx, stats, sha256, formats, pipeline; find_package and pkg-config; SHARED=${SHARED})")
