cmake_minimum_required(VERSION 3.22)
# The WebAssembly build of the core and C API (scripts/web-build, incremental) and its Node
# consumer (wasm_consumer.mjs) on the conformance corpus. Prints "emscripten is not installed"
# (the test's skip pattern) where it is not.
# With a CLI, the page's logic (web/site/inspector.mjs, inspector_test.mjs) must also give the
# CLI's verdicts and judge a 2 GB file from its header alone, and the module describe GGUF, NumPy
# and PyTorch files in the words of `safetensors inspect`.
#   cmake -DSOURCE_DIR= -DNODE= -DCORPUS= [-DCLI= -DSCRATCH=] -P wasm.cmake
execute_process(COMMAND ${SOURCE_DIR}/scripts/web-build WORKING_DIRECTORY ${SOURCE_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 2)
  message(STATUS "${err}")
  return()
elseif(rc)
  message(FATAL_ERROR "scripts/web-build failed (${rc}):\n${out}${err}")
endif()
# Node 20's fetch would try to load the .wasm by URL: emscripten 3.1.6 reads files only without it.
execute_process(COMMAND ${NODE} --no-experimental-fetch ${SOURCE_DIR}/tests/capi/wasm_consumer.mjs
                        ${SOURCE_DIR}/build-wasm ${CORPUS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc OR NOT out MATCHES "wasm consumer ok: 149 files")
  message(FATAL_ERROR "the WebAssembly consumer failed (${rc}):\n${out}${err}")
endif()
if(CLI)
  execute_process(COMMAND ${NODE} --no-experimental-fetch ${SOURCE_DIR}/tests/capi/inspector_test.mjs
                          ${SOURCE_DIR}/build-wasm ${CORPUS} ${CLI} ${SCRATCH}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE inspector_out ERROR_VARIABLE err)
  file(REMOVE_RECURSE ${SCRATCH})  # a sparse 2 GB file
  if(rc OR NOT inspector_out MATCHES "inspector ok")
    message(FATAL_ERROR "the inspector's test failed (${rc}):\n${inspector_out}${err}")
  endif()
  string(APPEND out "${inspector_out}")
endif()
file(SIZE ${SOURCE_DIR}/build-wasm/safetensors_c.wasm wasm_bytes)
file(SIZE ${SOURCE_DIR}/build-wasm/safetensors_c.js js_bytes)
message(STATUS "${out}safetensors_c.wasm ${wasm_bytes} bytes, safetensors_c.js ${js_bytes} bytes")
