// SPDX-License-Identifier: Apache-2.0
// Force-included in the WebAssembly build only (web/CMakeLists.txt): emscripten 3.1.6's libc++
// (LLVM 14) predates three C++20/17 library features the core uses. Each stand-in is defined
// only when the library lacks the feature.
#pragma once

#include <bit>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

namespace std {

#if !defined(__cpp_lib_bit_cast)
template <class To, class From>
requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>) constexpr To
    bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
#endif

#if !defined(__cpp_lib_smart_ptr_for_overwrite)
template <class T>
requires is_unbounded_array_v<T> unique_ptr<T> make_unique_for_overwrite(size_t n) {
  return unique_ptr<T>(new remove_extent_t<T>[n]);
}
#endif

// Floating-point from_chars (libc++ 14 has only the integer overloads): musl's strtod, which
// rounds correctly, on a NUL-terminated copy. The core parses plain decimal text with it.
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 170000
inline from_chars_result from_chars(const char* first, const char* last, double& value) {
  const string text(first, last);
  char* end = nullptr;
  const double parsed = strtod(text.c_str(), &end);
  if (end == text.c_str()) return {first, errc::invalid_argument};
  value = parsed;
  return {first + (end - text.c_str()), errc{}};
}
#endif

}  // namespace std
