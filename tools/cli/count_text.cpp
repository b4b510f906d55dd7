// SPDX-License-Identifier: Apache-2.0
#include "count_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace st_cli {

std::string with_commas(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string count_of(std::uint64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", with_commas(n), noun, n == 1 ? "" : "s");
}

std::string shape_text(std::span<const std::uint64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace st_cli
