// SPDX-License-Identifier: Apache-2.0
#include "report.h"

#include <utility>

#include <fmt/format.h>

#include "safetensors/sniff.h"

namespace st_cli {

void print_error(const safetensors::error& e) {
  safetensors::error shown = safetensors::explain_format_error(e);
  // Said once: a message that already gives the position ("GLOBAL at pickle byte 169: ...")
  // does not repeat it as "(at byte 169)".
  if (shown.offset && (shown.message.find(fmt::format("byte {}:", *shown.offset)) != std::string::npos ||
                       shown.message.find(fmt::format("byte {} of", *shown.offset)) != std::string::npos)) {
    shown.offset.reset();
  }
  fmt::print(stderr, "safetensors: error: {}\n", printable_text(shown.to_string()));
}

void print_error(std::string_view message) { fmt::print(stderr, "safetensors: error: {}\n", printable_text(message)); }

void print_warning(std::string_view message) {
  fmt::print(stderr, "safetensors: warning: {}\n", printable_text(message));
}

safetensors::error usage_error(std::string message) {
  return safetensors::make_error(safetensors::error_code::invalid_argument, std::move(message));
}

int exit_code_for(const safetensors::error& e) noexcept {
  using safetensors::error_code;
  switch (e.code) {
    case error_code::io:
    case error_code::invalid_argument:
    case error_code::invalid_slice:
    case error_code::tensor_not_found: return exit_usage;
    case error_code::code_execution: return exit_runs_code;
    default: return exit_failed;
  }
}

}  // namespace st_cli
