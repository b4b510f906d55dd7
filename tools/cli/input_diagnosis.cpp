// SPDX-License-Identifier: Apache-2.0
#include "input_diagnosis.h"

#include <fmt/format.h>

#include "safetensors/json_text.h"
#include "safetensors/printable_text.h"
#include "safetensors/sniff.h"

namespace st_cli {

using safetensors::printable_text;

std::string problem_line(const safetensors::error& e, const std::string& path) {
  safetensors::error shown = safetensors::explain_format_error(e);
  const std::string file = shown.path.empty() ? path : shown.path;
  shown.path.clear();
  return printable_text(fmt::format("{}: {}: {}", file, safetensors::error_code_name(shown.code), shown.to_string()));
}

std::string problem_json(const safetensors::error& e, const std::string& path) {
  const safetensors::error shown = safetensors::explain_format_error(e);
  return fmt::format(R"({{"file":{},"code":"{}","message":{},"offset":{},"tensor":{}}})",
                     safetensors::json_quote(shown.path.empty() ? path : shown.path),
                     safetensors::error_code_name(shown.code), safetensors::json_quote(shown.message),
                     shown.offset ? std::to_string(*shown.offset) : "null",
                     shown.tensor ? safetensors::json_quote(*shown.tensor) : "null");
}

}  // namespace st_cli
