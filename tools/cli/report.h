// SPDX-License-Identifier: Apache-2.0
// The one place that turns library errors into messages and exit codes.
#pragma once

#include <string>
#include <string_view>

#include "safetensors/error.h"

namespace st_cli {

/// Prints "safetensors: error: <file>: <message> (at byte N, tensor 'T')" to stderr.
void print_error(const safetensors::error& e);
/// Prints "safetensors: error: <message>" to stderr.
void print_error(std::string_view message);
/// 2 for I/O and usage problems, 1 for a file that failed a check.
[[nodiscard]] int exit_code_for(const safetensors::error& e) noexcept;
/// Prints `e` (with `path` when it names none) and returns its exit code.
[[nodiscard]] int fail_with(const safetensors::error& e, const std::string& path);

}  // namespace st_cli
