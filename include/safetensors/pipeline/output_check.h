// SPDX-License-Identifier: Apache-2.0
// The one check every writing command makes on its outputs before it writes any byte, so a
// command that cannot finish fails without touching any output, never replaces a device or
// a FIFO, and never overwrites one of its own inputs; and the output directories that a
// failed command created are removed again.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/error.h"

namespace safetensors::pipeline {

/// An IoError "<what>: <strerror(err)>" about `path`.
[[nodiscard]] safetensors::error os_failure(const std::string& what, int err, const std::string& path);

/// Whether an output may be the same file as an input. Only the CLI's `cast` and `extract`
/// allow it: their documented in-place rewrite goes through a temporary renamed over the input.
enum class in_place : bool { refuse, allow };

/// The check on one output file, made before anything is written:
/// - `path` is absent, or a regular file (a symlink is judged by its target, which is what
///   gets written); a directory, device, FIFO or socket is refused, naming what it is;
/// - it is not the same file (st_dev and st_ino: also through symlinks and hard links) as
///   any of `inputs`, unless `in_place::allow`;
/// - the directory it lands in exists and the caller may write there (access(2));
/// - no symlink on the way is one the protected_symlinks rule forbids following
///   (resolve_output_path, output_path.h: a link planted in a sticky directory).
/// Errors: IoError for the first two, the directory and a refused link (with the reason),
/// InvalidArgument for an output that is an input. The error's path is `path`.
[[nodiscard]] safetensors::status check_output(const std::string& path, std::span<const std::string> inputs,
                                               in_place rule = in_place::refuse);

/// The same for an output directory: an existing writable directory, or a path whose
/// nearest existing ancestor is a writable directory (the rest is created).
[[nodiscard]] safetensors::status check_output_dir(const std::string& path);

/// The output budget: the most tensor bytes a conversion or rewrite may write, checked on its
/// plan before any byte is written, so that a small input cannot fill the disk (tensors that
/// alias one storage, each written out in full). By default `output_budget_ratio` times the
/// input's size (tensor_source::input_bytes), and at least `output_budget_floor`. The ratio
/// is above the largest expansion a legitimate conversion makes: GGUF's most compact types,
/// Q1_0 (128 weights in 18 bytes: 1.125 bits each) and IQ1_S (256 in 50: 1.5625 bits),
/// dequantized to F32 grow 28.4 and 20.5 times, cast on to F64 56.9 and 41 times; 64 is the
/// next power of two. SafeTensors' sub-byte F4 to F64 grows 16 times, MLX's affine layers of
/// 1-bit codes to F32 less than 32 times. The floor lets small files convert whatever they hold.
inline constexpr std::uint64_t output_budget_ratio = 64;
inline constexpr std::uint64_t output_budget_floor = std::uint64_t{1} << 30;  // 1 GiB

/// max(input_bytes * output_budget_ratio, output_budget_floor), saturating.
[[nodiscard]] std::uint64_t default_output_budget(std::uint64_t input_bytes) noexcept;

/// LimitExceeded when `planned` output bytes exceed `max_output_bytes` (0: the default
/// budget for `input_bytes`); the message names both sizes and `option`, the option that
/// raises the limit as the caller spells it (convert_options::names).
[[nodiscard]] safetensors::status check_output_budget(std::uint64_t planned, std::uint64_t input_bytes,
                                                      std::uint64_t max_output_bytes,
                                                      std::string_view option = "max_output_size (--max-output-size)");

/// True when `path` names a directory: an existing one, or a path ending in '/'.
[[nodiscard]] bool is_directory_path(const std::string& path);

/// Every file a checkpoint was read from: its shards and its index.
[[nodiscard]] std::vector<std::string> input_files(const safetensors::checkpoint& c);

/// The file names (in `directory`) that `write_checkpoint(directory, specs, options)` writes:
/// the shards, then the index when there are several.
[[nodiscard]] safetensors::result<std::vector<std::string>> checkpoint_output_names(
    std::span<const safetensors::tensor_spec> specs, const safetensors::shard_write_options& options);

/// check_output_dir on `directory`, then check_output on every file `write_checkpoint`
/// would write there.
[[nodiscard]] safetensors::status check_checkpoint_outputs(const std::string& directory,
                                                           std::span<const safetensors::tensor_spec> specs,
                                                           const safetensors::shard_write_options& options,
                                                           std::span<const std::string> inputs);

/// The one way a pipeline writes a sharded checkpoint: check_checkpoint_outputs, then
/// `directory` is created (with its parents) and `write_checkpoint` fills it; when that
/// fails, the directories this call created are removed again (created_directory).
[[nodiscard]] safetensors::result<safetensors::shard_assignment> write_checkpoint_output(
    const std::string& directory, std::span<const safetensors::tensor_spec> specs,
    const safetensors::tensor_producer& produce, const safetensors::shard_write_options& options,
    std::span<const std::string> inputs);

/// An output directory created for a sharded write, with its missing parents. Unless
/// `keep()` is called (after a successful write), the destructor removes what this object
/// created, and only that: the files named by `remember` in a directory it created (they
/// cannot be anyone else's), then each directory it created, deepest first, when empty. A
/// signal that ends the process removes them too, when empty (remove_temporaries_on_signals).
class created_directory {
 public:
  /// Creates `path` and its missing parents. IoError naming `path` when it cannot.
  [[nodiscard]] static safetensors::result<created_directory> create(const std::string& path);

  created_directory(created_directory&& other) noexcept;
  created_directory& operator=(created_directory&&) = delete;
  created_directory(const created_directory&) = delete;
  created_directory& operator=(const created_directory&) = delete;
  ~created_directory();

  /// Files the write may leave in the directory (e.g. a shard renamed before a failure).
  void remember(std::vector<std::string> file_names) { files_ = std::move(file_names); }
  /// The write succeeded: leave everything in place.
  void keep() noexcept;

 private:
  created_directory() = default;
  std::string path_;
  std::vector<std::string> created_;  // deepest first
  std::vector<int> on_signal_;        // created_, as recorded for remove_temporary_files (cleanup.h)
  std::vector<std::string> files_;
};

}  // namespace safetensors::pipeline
