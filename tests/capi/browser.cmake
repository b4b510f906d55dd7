cmake_minimum_required(VERSION 3.22)
# The web inspector in headless Chromium (tests/capi/browser_test.mjs) over build-wasm/site, which
# scripts/web-build brings up to date first (capi_wasm, the fixture this test requires, built it).
# Prints "browser test skipped: ..." (the test's skip pattern) without chromium or puppeteer-core.
# Screenshots of every view and the page's timings go to OUT.
#   cmake -DSOURCE_DIR= -DNODE= -DCORPUS= -DCLI= -DOUT= -DNODE_MODULES= -P browser.cmake
execute_process(COMMAND ${SOURCE_DIR}/scripts/web-build WORKING_DIRECTORY ${SOURCE_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 2)
  message(STATUS "${err}")
  return()
elseif(rc)
  message(FATAL_ERROR "scripts/web-build failed (${rc}):\n${out}${err}")
endif()
execute_process(COMMAND ${NODE} ${SOURCE_DIR}/tests/capi/browser_test.mjs ${SOURCE_DIR}/build-wasm/site ${CORPUS} ${CLI}
                        ${OUT} ${NODE_MODULES}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc OR NOT out MATCHES "browser test (ok|skipped)")
  message(FATAL_ERROR "the browser test failed (${rc}):\n${out}${err}")
endif()
message(STATUS "${out}")
