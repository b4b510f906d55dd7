# Warnings and sanitizers applied to every target of this project (not to consumers).
add_library(safetensors_build_flags INTERFACE)
target_compile_options(safetensors_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough)
if(SAFETENSORS_WERROR)
  target_compile_options(safetensors_build_flags INTERFACE -Werror)
endif()
if(SAFETENSORS_SANITIZE OR SAFETENSORS_TSAN)
  # After the build type's flags, so they win: -O1 -g1 compiles in under half the CPU time of
  # RelWithDebInfo's -O2 -g (one test file under ASan: 15 s against 34 s) and keeps the line
  # tables the sanitizers' stack traces need.
  target_compile_options(safetensors_build_flags INTERFACE -O1 -g1)
endif()
# The tests' own code (safetensors_test_code(target)) is compiled without optimization, after
# the flags above so it wins: the library under test keeps the build's flags, and GoogleTest's
# macros compile ~2.5x faster at -O0 (a clean scripts/test spent half its build optimizing test
# code no benchmark runs).
target_compile_options(safetensors_build_flags INTERFACE $<$<BOOL:$<TARGET_PROPERTY:SAFETENSORS_TEST_CODE>>:-O0>)
function(safetensors_test_code target)
  set_target_properties(${target} PROPERTIES SAFETENSORS_TEST_CODE ON)
endfunction()
if(SAFETENSORS_SANITIZE)
  target_compile_options(safetensors_build_flags INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(safetensors_build_flags INTERFACE -fsanitize=address,undefined)
  target_compile_definitions(safetensors_build_flags INTERFACE _GLIBCXX_ASSERTIONS)
endif()
if(SAFETENSORS_TSAN)
  target_compile_options(safetensors_build_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(safetensors_build_flags INTERFACE -fsanitize=thread)
endif()
