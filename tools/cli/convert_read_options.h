// SPDX-License-Identifier: Apache-2.0
// The guard `convert` runs in: an allocation failure becomes a clean error.
#pragma once

#include <new>
#include <string>
#include <utility>

#include "report.h"

namespace st_cli {

/// Runs `convert` and turns std::bad_alloc from anywhere inside it into LimitExceeded
/// naming `path`, so that running out of memory is an error like any other, never an
/// "internal error".
template <class F>
run_result without_bad_alloc(const std::string& path, F&& convert) {
  try {
    return std::forward<F>(convert)();
  } catch (const std::bad_alloc&) {
    return safetensors::make_error(safetensors::error_code::limit_exceeded,
                                   "out of memory while converting (memory is limited or the input needs "
                                   "more than is available)")
        .with_path(path);
  }
}

}  // namespace st_cli
