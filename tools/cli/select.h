// SPDX-License-Identifier: Apache-2.0
// Choosing tensors by name patterns (--only / --exclude, or positional TENSOR arguments).
#pragma once

#include <string>
#include <vector>

#include "safetensors/file.h"

namespace st_cli {

/// True when `pattern` names `name` exactly or matches it as a glob (safetensors/glob.h).
[[nodiscard]] bool name_matches(const std::string& pattern, std::string_view name);

/// Tensors of `f`, in file order, that match some `only` pattern (all when `only` is
/// empty) and no `exclude` pattern. An `only` pattern that matches no tensor is an
/// error (TensorNotFound), so typos do not silently select nothing.
[[nodiscard]] safetensors::result<std::vector<const safetensors::tensor_info*>> select_tensors(
    const safetensors::file& f, const std::vector<std::string>& only, const std::vector<std::string>& exclude);

}  // namespace st_cli
