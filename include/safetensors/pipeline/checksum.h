// SPDX-License-Identifier: Apache-2.0
// SHA-256 of a whole file, exactly as sha256sum computes it, and of each tensor's data bytes
// in the same pass: what `checksum` prints and checks, and what Python returns. The whole-file
// digest works on anything readable (a partial download, standard input); per-tensor digests
// need a valid SafeTensors file, read from any backend (a remote one included).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

struct tensor_digest {
  std::string name;
  std::uint64_t bytes = 0;
  std::string sha256;  ///< lowercase hex
};

struct file_digest {
  std::string sha256;  ///< of the whole file, lowercase hex
  std::uint64_t bytes = 0;
  std::vector<tensor_digest> tensors;  ///< with per_tensor, in file order
};

struct checksum_options {
  bool per_tensor = false;     ///< also hash each tensor (SafeTensors files only)
  progress_callback progress;  ///< bytes hashed / file size (0 when unknown); returning false cancels
};

/// Digest of `path`, or of standard input for "-" (sequential reads: any content, pipes too).
/// With per_tensor the file is opened as SafeTensors (pread) instead, and its errors are the
/// reader's; a directory is IoError (EISDIR).
[[nodiscard]] result<file_digest> checksum(const std::string& path, const checksum_options& options = {});

/// Whole-file and per-tensor digests of an opened file, in one pass: the header, every
/// tensor (they tile the data in file order), then any trailing bytes.
[[nodiscard]] result<file_digest> checksum(const file& f, const checksum_options& options = {});

}  // namespace safetensors::pipeline
