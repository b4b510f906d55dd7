// SPDX-License-Identifier: Apache-2.0
// The built-in rows' describers (format_table.h): what `inspect` shows of a GGUF, NumPy or
// PyTorch file, as rows or as one JSON object (describe_<format>.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "safetensors/pipeline/format_table.h"

namespace safetensors::pipeline::detail {

[[nodiscard]] result<format_description> describe_gguf(const std::string& path, description_style style);
[[nodiscard]] result<format_description> describe_numpy(const std::string& path, description_style style);
[[nodiscard]] result<format_description> describe_pytorch(const std::string& path, description_style style);

/// `n` with its digits grouped by three, as the CLI prints counts: "1,234,567".
[[nodiscard]] std::string with_commas(std::uint64_t n);

}  // namespace safetensors::pipeline::detail
