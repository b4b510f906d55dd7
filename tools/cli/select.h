// SPDX-License-Identifier: Apache-2.0
// Choosing tensors by name patterns (--only / --exclude, or positional TENSOR arguments),
// with the one rule of safetensors/glob.h (name_matches).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "safetensors/file.h"

namespace st_cli {

/// Whether `name` matches one of `patterns` (safetensors::name_matches).
[[nodiscard]] bool any_matches(const std::vector<std::string>& patterns, std::string_view name);

/// TensorNotFound ("no tensor matches 'X'") for the first of `only` / `exclude`
/// that matches none of `names`, so a typo never silently selects nothing (or all).
[[nodiscard]] safetensors::status require_matches(std::span<const std::string_view> names,
                                                  const std::vector<std::string>& only,
                                                  const std::vector<std::string>& exclude, const std::string& path);
/// The same over a file's tensors.
[[nodiscard]] safetensors::status require_matches(std::span<const safetensors::tensor_info> tensors,
                                                  const std::vector<std::string>& only,
                                                  const std::vector<std::string>& exclude, const std::string& path);

/// Tensors of `f`, in file order, that match some `only` pattern (all when `only` is
/// empty) and no `exclude` pattern; fails as require_matches does.
[[nodiscard]] safetensors::result<std::vector<const safetensors::tensor_info*>> select_tensors(
    const safetensors::file& f, const std::vector<std::string>& only, const std::vector<std::string>& exclude);

}  // namespace st_cli
