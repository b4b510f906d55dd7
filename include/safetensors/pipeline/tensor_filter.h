// SPDX-License-Identifier: Apache-2.0
// Which tensors an operation applies to, by name patterns (safetensors/glob.h's rule): the
// --only / --exclude of the tools, and the `only`/`exclude` arguments of the bindings.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"

namespace safetensors::pipeline {

/// The tensors matching some `only` pattern (all when `only` is empty) and no `exclude` one.
struct tensor_filter {
  std::vector<std::string> only;
  std::vector<std::string> exclude;

  [[nodiscard]] bool selects_all() const noexcept { return only.empty() && exclude.empty(); }
  [[nodiscard]] bool selects(std::string_view name) const;
  /// TensorNotFound naming `path` and the first pattern that matches none of `names`.
  [[nodiscard]] status require_matches(std::span<const std::string_view> names, const std::string& path) const;
};

}  // namespace safetensors::pipeline
