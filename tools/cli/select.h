// SPDX-License-Identifier: Apache-2.0
// Choosing tensors by name patterns (--only / --exclude, or positional TENSOR arguments),
// with the one rule of safetensors/glob.h (name_matches).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "safetensors/file.h"

namespace st_cli {

/// TensorNotFound ("no tensor matches 'X'") for the first of `only` / `exclude`
/// that matches none of `tensors`, so a typo never silently selects nothing (or all).
[[nodiscard]] safetensors::status require_matches(std::span<const safetensors::tensor_info> tensors,
                                                  const std::vector<std::string>& only,
                                                  const std::vector<std::string>& exclude, const std::string& path);

/// Tensors of `f`, in file order, that match some `only` pattern (all when `only` is
/// empty) and no `exclude` pattern; fails as require_matches does.
[[nodiscard]] safetensors::result<std::vector<const safetensors::tensor_info*>> select_tensors(
    const safetensors::file& f, const std::vector<std::string>& only, const std::vector<std::string>& exclude);

}  // namespace st_cli
