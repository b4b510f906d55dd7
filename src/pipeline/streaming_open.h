// SPDX-License-Identifier: Apache-2.0
// Internal: how the pipelines open what they stream through. The pread backend maps nothing,
// so memory stays bounded however large the checkpoint.
#pragma once

#include <string>

#include "safetensors/checkpoint.h"
#include "safetensors/file.h"

namespace safetensors::pipeline {

/// A SafeTensors file (pread backend); errors name `path`.
[[nodiscard]] inline result<file> open_streaming_file(const std::string& path) {
  open_options options;
  options.backend = io_backend::pread;
  auto f = file::open(path, options);
  if (!f) return std::move(f).err().with_path(path);
  return f;
}

/// A checkpoint (file, directory or index) whose shards use the pread backend; errors name `path`.
[[nodiscard]] inline result<checkpoint> open_streaming_checkpoint(const std::string& path) {
  checkpoint_options options;
  options.shard.backend = io_backend::pread;
  auto c = checkpoint::open(path, options);
  if (!c) return std::move(c).err().with_path(path);
  return c;
}

}  // namespace safetensors::pipeline
