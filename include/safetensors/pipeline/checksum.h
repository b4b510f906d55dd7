// SPDX-License-Identifier: Apache-2.0
// SHA-256 of a whole file, exactly as sha256sum computes it, and of each tensor's data bytes
// in the same pass: what `checksum` prints and checks, and what Python returns. The whole-file
// digest works on anything readable (a partial download, standard input); per-tensor digests
// need a valid SafeTensors file, read from any backend (a remote one included).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/pipeline/tensor_source.h"
#include "safetensors/range_reader.h"

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

/// Whole-file digest of bytes read by range, in order (a remote file: remote::http_source).
[[nodiscard]] result<file_digest> checksum(const range_reader& bytes, const checksum_options& options = {});

/// One file of a check list: sha256sum's "HEX  PATH" (or "HEX *PATH") line and the
/// "tensor HEX  NAME" lines `checksum --per-tensor` writes after it.
struct checksum_entry {
  std::string path;
  std::string sha256;                          ///< lowercase hex
  std::map<std::string, std::string> tensors;  ///< name -> lowercase hex
};

struct checksum_list {
  std::vector<checksum_entry> entries;
  std::size_t malformed_lines = 0;  ///< lines that are neither (skipped, as sha256sum -c does)
};

/// Reads a check list (checksum's output or sha256sum's); blank lines and "\r\n" are fine.
[[nodiscard]] checksum_list parse_checksum_list(std::string_view text);

/// A listed digest against the computed one.
enum class digest_match : std::uint8_t { ok, mismatch, missing };

struct checksum_verdict {
  digest_match file = digest_match::ok;
  std::vector<std::pair<std::string, digest_match>> tensors;  ///< each listed tensor, by name
  [[nodiscard]] std::size_t failures() const noexcept;        ///< the file's and tensors' non-ok verdicts
};

/// Compares what `expected` lists with `computed` (missing: a listed tensor the file lacks).
[[nodiscard]] checksum_verdict check(const checksum_entry& expected, const file_digest& computed);

}  // namespace safetensors::pipeline
