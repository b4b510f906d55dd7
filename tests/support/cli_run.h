// SPDX-License-Identifier: Apache-2.0
// Running the built `safetensors` binary from tests: stdout and stderr apart, the exit
// status, and the child's peak resident memory; plus small file builders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/writer.h"

namespace st_test {

/// The built `safetensors` binary.
std::string cli_path();

struct cli_result {
  int status = -1;
  std::string out;
  std::string err;
  long max_rss_kib = 0;  ///< peak resident set of the child (getrusage via wait4)
};

/// Runs the CLI with `args` (each passed as one argv entry, no shell), stdin from /dev/null.
cli_result run_cli(const std::vector<std::string>& args);

/// Starts the CLI with `args` without waiting for it (stdin, stdout and stderr on
/// /dev/null); returns its pid, or -1 (with a test failure) when it cannot start.
int start_cli(const std::vector<std::string>& args);

/// Every command that reads one SafeTensors input and stops on a bad one, with `input` as
/// that input (outputs go next to it). Plain `inspect` is left out: it describes GGUF,
/// PyTorch and NumPy files itself. `with_checks` adds validate and verify, which report a
/// bad input as a finding on stdout instead of an error.
std::vector<std::vector<std::string>> reading_commands(const std::filesystem::path& input, bool with_checks);

/// A float32 tensor for make_file.
struct f32_tensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::vector<float> values;
};

/// Writes an F32-only file with safetensors::write_file; fails the test on error.
void make_f32_file(const std::filesystem::path& path, const std::vector<f32_tensor>& tensors,
                   const std::optional<safetensors::metadata_map>& metadata = std::nullopt);

}  // namespace st_test
