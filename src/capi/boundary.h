// SPDX-License-Identifier: Apache-2.0
// The C API's boundary: the per-thread last error, and `guarded`, which runs a C++ body and
// turns its result or any exception into an int status, so nothing is thrown into C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "safetensors/error.h"
#include "safetensors/safetensors_c.h"

namespace safetensors::capi {

/// Records `e` as this thread's last error; returns its status (error_code + 1).
int fail(const error& e) noexcept;
/// Records an INVALID_ARGUMENT error naming the C function.
int fail_argument(const char* function, std::string_view message) noexcept;
/// Records an error that has no library error_code (out of memory, internal).
int fail_plain(int status, std::string_view message) noexcept;

/// The status of a result: SAFETENSORS_OK, or its error recorded.
template <class T>
int status_of(const result<T>& r) noexcept {
  return r ? SAFETENSORS_OK : fail(r.err());
}

/// Runs `body(function)` (returning an int status) for the C function named `function`;
/// exceptions become statuses.
template <class Body>
int guarded(const char* function, Body&& body) noexcept {
  try {
    return body(function);
  } catch (const std::bad_alloc&) {
    return fail_plain(SAFETENSORS_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail_plain(SAFETENSORS_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail_plain(SAFETENSORS_ERR_INTERNAL, "unknown exception");
  }
}

/// Inside a guarded body whose function-name parameter is `fn`: fails when a required
/// pointer argument is NULL.
#define SAFETENSORS_C_REQUIRE(pointer)                                                            \
  do {                                                                                            \
    if ((pointer) == nullptr) return ::safetensors::capi::fail_argument(fn, #pointer " is NULL"); \
  } while (false)

}  // namespace safetensors::capi
