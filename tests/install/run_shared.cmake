# The install test for BUILD_SHARED_LIBS=ON: configures and builds the libraries and the CLI
# shared into WORK_DIR/project (no tests, benchmarks, fuzzers, Python or C API: only what is
# installed and consumed; the remote reader is the CLI's module, over the shared core), then
# runs run.cmake on it. The CLI then runs from a moved prefix through its install RUNPATH
# ($ORIGIN/../lib), without LD_LIBRARY_PATH.
#   cmake -DSOURCE_DIR= -DWORK_DIR= -DCXX= -DGENERATOR= -P run_shared.cmake
set(project_dir ${WORK_DIR}/project)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${project_dir} -G ${GENERATOR}
                        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DBUILD_SHARED_LIBS=ON
                        -DSAFETENSORS_BUILD_TESTS=OFF -DSAFETENSORS_BUILD_BENCH=OFF -DSAFETENSORS_BUILD_FUZZ=OFF
                        -DSAFETENSORS_BUILD_PYTHON=OFF -DSAFETENSORS_BUILD_C_API=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "shared configure failed: ${out}${err}")
endif()
# Two jobs: ctest runs other tests beside this one.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${project_dir} --parallel 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "shared build failed: ${out}${err}")
endif()
foreach(library safetensors safetensors_mlx safetensors_stats safetensors_sha256 safetensors_formats
                safetensors_pipeline)
  file(GLOB_RECURSE built ${project_dir}/src/lib${library}.so)
  if(NOT built)
    message(FATAL_ERROR "BUILD_SHARED_LIBS=ON built no lib${library}.so")
  endif()
endforeach()
set(BUILD_DIR ${project_dir})
set(SHARED ON)
set(WORK_DIR ${WORK_DIR}/consumers)
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)
