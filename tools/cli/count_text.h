// SPDX-License-Identifier: Apache-2.0
// Counts and shapes as people read them: "1 tensor", "3 tensors", "1,234,567", "[2, 3]".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace st_cli {

/// `n` with a comma every three digits: 1234567 -> "1,234,567".
[[nodiscard]] std::string with_commas(std::uint64_t n);

/// "1 tensor", "2 tensors", "1,000 shards": the count with commas and the noun in the
/// right number (plural by adding "s").
[[nodiscard]] std::string count_of(std::uint64_t n, std::string_view noun);

/// A shape as the tables print it: "[2, 3]", "[]" for a scalar.
[[nodiscard]] std::string shape_text(std::span<const std::uint64_t> shape);

}  // namespace st_cli
