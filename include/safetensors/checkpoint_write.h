// SPDX-License-Identifier: Apache-2.0
/// \file checkpoint_write.h
/// Writing a checkpoint: huggingface_hub's shard assignment, then the shards and the index
/// published atomically; and the shard-size text ("5GB") every front end accepts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/chunk_sink.h"
#include "safetensors/error.h"
#include "safetensors/header.h"
#include "safetensors/writer.h"

namespace safetensors {

/// Parses a size with decimal or binary units: "5GB" = 5,000,000,000, "500MB",
/// "2GiB" = 2 * 2^30, "1.5GB", "123" (bytes), "10KB"/"10kB". Errors: InvalidArgument.
[[nodiscard]] result<std::uint64_t> parse_byte_size(std::string_view text);

/// A shard file name prefix is one file name's start: not empty, no '/' (nor NUL), not "." or
/// "..", so every file lands in the output directory. Errors: InvalidArgument saying which.
[[nodiscard]] status check_shard_prefix(std::string_view prefix);

/// The huggingface_hub default, 5GB.
inline constexpr std::uint64_t default_max_shard_bytes = 5'000'000'000;

struct shard_write_options {
  std::uint64_t max_shard_bytes = default_max_shard_bytes;
  std::string prefix = "model";  ///< file names: <prefix>-00001-of-00003.safetensors
  write_options file;            ///< alignment and `__metadata__` of every shard
  metadata_map index_metadata;   ///< extra "metadata" keys of the index besides total_size
};

/// How tensors split into shards: huggingface_hub's greedy rule in the given order. A
/// new shard starts when the next tensor would push the current one past the limit; a
/// tensor larger than the limit gets a shard of its own, emitted at once (the shard
/// being filled continues after it).
struct shard_assignment {
  std::vector<std::vector<std::size_t>> shards;  ///< indices into the input, per shard
  std::vector<std::string> file_names;
};
[[nodiscard]] result<shard_assignment> assign_shards(std::span<const tensor_spec> tensors,
                                                     const shard_write_options& options = {});

/// Writes a checkpoint into `directory` (which must exist). One shard gives
/// `<prefix>.safetensors` and no index; more give numbered shards plus
/// `<prefix>.safetensors.index.json` (weight_map sorted, indent 2, trailing newline).
///
/// Atomicity: every file is written to a temporary in `directory` and fsynced first; any
/// failure up to that point removes the temporaries and leaves the directory unchanged.
/// Then the shards are renamed into place and the index last, so an index never names a
/// shard that is not complete. A rename can only fail after all data is safely on disk;
/// if one does, the files renamed before it stay (replacing same-named files), the rest
/// are removed, and the error names the file. Other files in `directory` (e.g. shards of
/// an older checkpoint with more shards) are never touched. Returns the assignment used.
[[nodiscard]] result<shard_assignment> write_checkpoint(const std::string& directory,
                                                        std::span<const tensor_data> tensors,
                                                        const shard_write_options& options = {});

/// Produces tensor `index` (into the spec list) by passing its bytes, in order, to `sink`.
using tensor_producer = std::function<status(std::size_t index, const chunk_sink& sink)>;

/// The same, with tensors produced on demand in chunks, so memory stays bounded by the
/// producer's chunks. Tensors are produced one at a time, in the order of `tensors`; a
/// producer that passes more or fewer bytes than the dtype and shape need fails the write
/// (InvalidArgument), as does any error it returns, leaving the directory unchanged.
[[nodiscard]] result<shard_assignment> write_checkpoint(const std::string& directory,
                                                        std::span<const tensor_spec> tensors,
                                                        const tensor_producer& produce,
                                                        const shard_write_options& options = {});

}  // namespace safetensors
