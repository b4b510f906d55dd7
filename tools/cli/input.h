// SPDX-License-Identifier: Apache-2.0
// Opening input files for the subcommands, and reading tensors in bounded chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/pipeline/tensor_source.h"

namespace st_cli {

using safetensors::pipeline::chunk_bytes;  // every chunked read of a tensor

/// Opens `path` (or an http://, https:// or file:// URL: remote_input.h) with the pread backend (nothing mapped: memory
/// stays bounded however large the file). When the file is not SafeTensors but a recognisable other format, the error
/// says so: "this is a GGUF file, not SafeTensors".
[[nodiscard]] safetensors::result<safetensors::file> open_input(const std::string& path);

/// read_header of a path or URL.
[[nodiscard]] safetensors::result<safetensors::header> read_input_header(const std::string& path,
                                                                         const safetensors::parse_options& options);

using safetensors::pipeline::read_tensor_chunks;

/// Elements per chunk when decoding values (a multiple of 8, so sub-byte chunks fill whole bytes).
inline constexpr std::size_t chunk_elements = std::size_t{1} << 19;

/// Bytes that chunk_elements elements of `t` occupy.
[[nodiscard]] std::size_t element_chunk_bytes(safetensors::dtype t);

/// Bytes of all tensors in `f` (what a full streaming pass reads).
[[nodiscard]] std::uint64_t total_tensor_bytes(const safetensors::file& f);

}  // namespace st_cli
