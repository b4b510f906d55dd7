// SPDX-License-Identifier: Apache-2.0
// Where tests find shared material, plus small file and shell helpers.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace st_test {

/// ../shared/conformance (override with SAFETENSORS_CONFORMANCE_DIR). Fails the
/// current test with a clear message when it is missing.
std::filesystem::path conformance_dir();
/// A fresh, empty scratch directory for the current test (removed at process exit is not
/// guaranteed; it lives under the build's temp directory).
std::filesystem::path scratch_dir();

std::vector<std::byte> read_bytes(const std::filesystem::path& p);
/// The whole file as text (empty when it cannot be read).
std::string read_text(const std::filesystem::path& p);
void write_bytes(const std::filesystem::path& p, const std::vector<std::byte>& bytes);

/// Runs a shell command; returns the exit status and captured stdout (stderr merged if asked).
struct command_result {
  int status = -1;
  std::string out;
};
command_result run_command(const std::string& command, bool merge_stderr = false);

/// Single-quotes a string for /bin/sh.
std::string shell_quote(const std::string& s);

}  // namespace st_test
