// SPDX-License-Identifier: Apache-2.0
// The shapes of a conversion's input: a file, a sharded checkpoint (its directory or its index
// file), or a URL of a SafeTensors file or checkpoint; decided by the location door (location.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/location.h"

namespace safetensors::pipeline {

/// What a conversion reads.
struct convert_input {
  enum class kind { file, pytorch_sharded, safetensors_sharded, url };
  kind shape = kind::file;
  /// The file to read for kind::file (a checkpoint directory holding one .safetensors file
  /// is that file), else the directory or index named on the command line.
  std::string path;
  /// Every local file the conversion reads: the input, or the index and each of its shards
  /// (none for a URL).
  std::vector<std::string> files;
  /// A URL's location (kind::url): a SafeTensors file, or a checkpoint when it names one.
  std::optional<location> remote;
};

/// Resolves `path` through the location door: a URL (file:// is its local path) is kind::url;
/// a directory or an index (`*.index.json`) is a sharded checkpoint, PyTorch when it holds (or
/// is) `pytorch_model.bin.index.json` (or any `*.bin.index.json`), else SafeTensors; anything
/// else is a file. Errors: the location's, the index's or the directory's.
[[nodiscard]] safetensors::result<convert_input> resolve_convert_input(const std::string& path,
                                                                       const url_options& url = {});

}  // namespace safetensors::pipeline
