// SPDX-License-Identifier: Apache-2.0
// The shapes of a conversion's input and output: a file, or a sharded checkpoint (its
// directory or its index file).
#pragma once

#include <string>
#include <vector>

#include "safetensors/error.h"

namespace safetensors::pipeline {

/// What a conversion reads.
struct convert_input {
  enum class kind { file, pytorch_sharded, safetensors_sharded };
  kind shape = kind::file;
  /// The file to read for kind::file (a checkpoint directory holding one .safetensors file
  /// is that file), else the directory or index named on the command line.
  std::string path;
  /// Every file the conversion reads: the input, or the index and each of its shards.
  std::vector<std::string> files;
};

/// Looks at `path`: a directory or an index (`*.index.json`) is a sharded checkpoint,
/// PyTorch when it holds (or is) `pytorch_model.bin.index.json` (or any `*.bin.index.json`),
/// else SafeTensors; anything else is a file. Errors: the index's or the directory's.
[[nodiscard]] safetensors::result<convert_input> resolve_convert_input(const std::string& path);

}  // namespace safetensors::pipeline
