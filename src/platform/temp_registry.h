// SPDX-License-Identifier: Apache-2.0
// Internal: the temporary files of writes in progress, in fixed storage, so a signal
// handler can remove them without allocating (safetensors/cleanup.h).
#pragma once

#include <string>

namespace safetensors::detail {

/// Records a live temporary file; returns its slot, or -1 when the registry is full or the
/// path too long (the file is then only removed by its owner).
[[nodiscard]] int register_temporary(const std::string& path) noexcept;
/// Forgets a slot returned by register_temporary (no-op for -1).
void unregister_temporary(int slot) noexcept;

}  // namespace safetensors::detail
