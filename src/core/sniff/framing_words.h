// SPDX-License-Identifier: Apache-2.0
// What explain_format_error (explain.cpp) and explain_framing_error (framing.cpp) share.
#pragma once

#include <string>
#include <utility>

#include "safetensors/error.h"

namespace safetensors::detail {

/// The length-prefix errors: what any non-SafeTensors file runs into first. (JSON errors are
/// left alone: the same codes describe a bad config.json or index, whose text is meant.)
inline bool is_length_prefix_error(error_code c) {
  return c == error_code::header_too_small || c == error_code::header_too_large ||
         c == error_code::invalid_header_length;
}

/// `e` with a new message and no offset: the words replace a byte-level report.
inline error with_message(error e, std::string message) {
  e.message = std::move(message);
  e.offset.reset();
  return e;
}

}  // namespace safetensors::detail
