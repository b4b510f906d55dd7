// SPDX-License-Identifier: Apache-2.0
// Internal: the error of pipeline options that do not fit together or this input.
#pragma once

#include <string>
#include <utility>

#include "safetensors/error.h"

namespace safetensors::pipeline::detail {

[[nodiscard]] inline error usage(std::string message) {
  return make_error(error_code::invalid_argument, std::move(message));
}

}  // namespace safetensors::pipeline::detail
