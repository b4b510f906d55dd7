// SPDX-License-Identifier: Apache-2.0
// Running the built `safetensors` binary from tests: stdout and stderr apart, the exit
// status, and the child's peak resident memory; plus small file builders.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "safetensors/writer.h"

namespace st_test {

/// The built `safetensors` binary.
std::string cli_path();
/// A /bin/sh command line: the binary's path quoted, then `args` (quoted by the caller) when given.
std::string cli_shell(const std::string& args = {});
/// `path` quoted for /bin/sh.
std::string quoted_path(const std::filesystem::path& path);

struct cli_result {
  int status = -1;
  std::string out;
  std::string err;
  long max_rss_kib = 0;    ///< peak resident set of the child (getrusage via wait4)
  double cpu_seconds = 0;  ///< user + system time of the child
};

/// Runs the CLI with `args` (each passed as one argv entry, no shell), stdin from /dev/null.
cli_result run_cli(const std::vector<std::string>& args);

/// What the child is given beyond run_cli's defaults.
struct cli_child {
  /// Runs as this user (and its primary group): a root test process checks what an
  /// unprivileged user gets (root may write into a mode 0555 directory).
  std::optional<uid_t> user;
  /// RLIMIT_FSIZE: a write past this many bytes of a file fails with EFBIG (SIGXFSZ
  /// ignored), as a full disk fails with ENOSPC: a write failure injected from outside.
  std::optional<std::uint64_t> max_file_bytes;
  /// Where stdout goes: captured (cli_result::out), /dev/null, or a pipe whose reader is
  /// gone (writes fail with EPIPE; SIGPIPE ignored, as under a parent that ignores it).
  enum class output { captured, discarded, broken_pipe } stdout_to = output::captured;
};
cli_result run_cli(const std::vector<std::string>& args, const cli_child& child);

/// The uid of an unprivileged user ("nobody"), or nullopt when there is none.
std::optional<uid_t> unprivileged_uid();

/// Starts the CLI with `args` without waiting for it (stdin, stdout and stderr on
/// /dev/null); returns its pid, or -1 (with a test failure) when it cannot start.
int start_cli(const std::vector<std::string>& args);

/// Every command that reads one SafeTensors input and stops on a bad one, with `input` as
/// that input (outputs go next to it). Plain `inspect` is left out: it describes GGUF,
/// PyTorch and NumPy files itself. `with_checks` adds validate and verify, which report a
/// bad input as a finding on stdout instead of an error.
std::vector<std::vector<std::string>> reading_commands(const std::filesystem::path& input, bool with_checks);

/// One command that writes files, with its input prepared (see writing_commands).
struct writing_command {
  std::string label;                ///< "convert .npz -> .safetensors"
  std::vector<std::string> before;  ///< argv before OUT: {"cast", IN}
  std::vector<std::string> after;   ///< argv after OUT: {"--dtype", "BF16"}
  std::filesystem::path input;      ///< a file it reads (for a checkpoint input: one of its shards)
  std::string output_name;          ///< a fresh output's name (a file, or a directory for directory outputs)
  bool directory_output = false;    ///< OUT is a directory the command fills
  std::string file_in_output;       ///< directory outputs: a file the command writes there
  bool rewrites_in_place = false;   ///< cast, extract: IN = OUT is the documented atomic rewrite
  std::filesystem::path input_dir;  ///< directory outputs: OUT that would overwrite `input` (empty: none)
  /// The full argv with `out` as the output.
  [[nodiscard]] std::vector<std::string> argv(const std::string& out) const;
};

/// Every subcommand (and every input format of `convert`) that writes files, each with its
/// input made in `dir`: a new writing command added here is walked by every output-safety
/// test. Needs the PyTorch fixtures.
std::vector<writing_command> writing_commands(const std::filesystem::path& dir);

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
