// SPDX-License-Identifier: Apache-2.0
// The one place that turns library errors into messages and exit codes.
#pragma once

#include <string>
#include <string_view>

#include "safetensors/error.h"
#include "safetensors/printable_text.h"

namespace st_cli {

/// Every text the CLI prints that came from a file (names, metadata, pickle globals, zip members,
/// GGUF strings) or quotes one (errors, warnings) goes through this: controls escaped
/// (`\x1b`, `\u202e`), so a file cannot drive the terminal. JSON output uses json_quote instead.
using safetensors::printable_text;

/// Exit statuses shared by every subcommand.
/// 3: an input was refused because it tries to run code (a pickle naming os.system, eval, ...),
/// so that scripts tell an attack from a corrupt file.
enum exit_status : int { exit_ok = 0, exit_failed = 1, exit_usage = 2, exit_runs_code = 3 };

/// What a subcommand returns: the exit status of a run that went to the end (0, or 1 or 2
/// after it reported its findings: differences, invalid files), or the error that stopped
/// it. Commands never print that error: `main` prints it once and exits with its code.
using run_result = safetensors::result<int>;

/// Prints "safetensors: error: <file>: <message> (at byte N, tensor 'T')" to stderr, escaped
/// (printable_text): the message may quote a tensor name or a pickle global.
void print_error(const safetensors::error& e);
/// Prints "safetensors: error: <message>" to stderr, escaped.
void print_error(std::string_view message);
/// Prints "safetensors: warning: <message>" to stderr, escaped: callers pass raw text.
void print_warning(std::string_view message);
/// 2 for I/O and usage problems, 1 for a file that failed a check.
[[nodiscard]] int exit_code_for(const safetensors::error& e) noexcept;

/// A usage problem that is only a message ("--depth must be >= 0"): InvalidArgument, exit 2.
[[nodiscard]] safetensors::error usage_error(std::string message);

}  // namespace st_cli
