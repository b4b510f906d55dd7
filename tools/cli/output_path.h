// SPDX-License-Identifier: Apache-2.0
// Checks on output paths made before anything is written, so a command that cannot finish
// fails without touching any output, and never overwrites one of its own inputs.
#pragma once

#include <string>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/error.h"

namespace st_cli {

/// An IoError "<what>: <strerror(err)>" about `path`.
[[nodiscard]] safetensors::error os_failure(const std::string& what, int err, const std::string& path);

/// IoError (with the system's reason) when `path` cannot become a file: its directory is
/// missing, not a directory or not writable, or `path` is a directory or not a regular file.
/// A symlink is judged by its target (outputs are written through symlinks).
[[nodiscard]] safetensors::status check_output_file(const std::string& path);

/// The same for an output directory: an existing writable directory, or a path whose
/// nearest existing ancestor is a writable directory (the rest is created).
[[nodiscard]] safetensors::status check_output_dir(const std::string& path);

/// InvalidArgument when `output` is the same file (device and inode, so also through
/// symlinks and hard links) as one of `inputs`. A missing `output` is fine.
[[nodiscard]] safetensors::status check_not_an_input(const std::string& output, const std::vector<std::string>& inputs);

/// Every file a checkpoint was read from: its shards and its index.
[[nodiscard]] std::vector<std::string> input_files(const safetensors::checkpoint& c);

/// check_output_dir on `directory`, then check_not_an_input on every file
/// `write_checkpoint(directory, specs, options)` would write (shards, and the index when
/// there are several).
[[nodiscard]] safetensors::status check_checkpoint_outputs(const std::string& directory,
                                                           std::span<const safetensors::tensor_spec> specs,
                                                           const safetensors::shard_write_options& options,
                                                           const std::vector<std::string>& inputs);

}  // namespace st_cli
