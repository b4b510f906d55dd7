// SPDX-License-Identifier: Apache-2.0
// Internal: what the checkpoint code shares beside the public index API.
#pragma once

#include <string>

#include "safetensors/checkpoint_index.h"

namespace safetensors::detail {

/// The directory part of `path` ("." when it has none).
[[nodiscard]] std::string parent_directory(const std::string& path);

}  // namespace safetensors::detail
