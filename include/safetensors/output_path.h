// SPDX-License-Identifier: Apache-2.0
/// \file output_path.h
/// Where a write to a path lands. A path that is (or passes through) a symlink is written
/// through it, except where the kernel's fs.protected_symlinks rule would refuse to follow
/// it: in a sticky world-writable directory (/tmp), a symlink is followed only when its
/// owner is the directory's owner or the caller. Anyone can plant a link there, and a
/// privileged writer following it would replace a file the planter could not. Every writer
/// (atomic_file.h) and the output checks of the pipelines resolve outputs here.
#pragma once

#include <string>

#include "safetensors/error.h"

namespace safetensors {

/// The file a write to `path` replaces: `path` itself when no symlink is on the way; else the
/// path with every symlink resolved (a dangling one at the end is replaced, not followed).
/// IoError (EACCES, naming the link, its owner and the directory) for a symlink the
/// protected_symlinks rule forbids following; ELOOP for a loop.
[[nodiscard]] result<std::string> resolve_output_path(const std::string& path);

}  // namespace safetensors
