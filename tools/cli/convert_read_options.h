// SPDX-License-Identifier: Apache-2.0
// What `convert` passes to the readers of foreign formats: the .npz zip-bomb limits from
// its options, and the guard that turns an allocation failure into a clean error.
#pragma once

#include <new>
#include <string>
#include <utility>

#include "foreign_formats.h"
#include "safetensors/formats/npz.h"
#include "safetensors/formats/pytorch.h"

namespace st_cli {

/// --max-expanded-size and --max-ratio as numpy::npz_options. InvalidArgument for a bad size.
[[nodiscard]] safetensors::result<safetensors::numpy::npz_options> npz_limits_of(const convert_args& args);

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
