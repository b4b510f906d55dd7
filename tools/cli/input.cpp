// SPDX-License-Identifier: Apache-2.0
#include "input.h"

#include <algorithm>

#include <fmt/format.h>

#include "remote_input.h"
#include "safetensors/sniff.h"

namespace st_cli {

safetensors::result<safetensors::file> open_input(const std::string& path) {
  auto at = resolve_input(path);
  if (!at) return std::move(at).err();
  safetensors::open_options options;
  options.backend = safetensors::io_backend::pread;
  auto f = at->open_file(options);
  if (f || !at->is_local()) return f;
  return safetensors::explain_format_error(std::move(f).err());
}

safetensors::result<safetensors::header> read_input_header(const std::string& path,
                                                           const safetensors::parse_options& options) {
  auto at = resolve_input(path);
  if (!at) return std::move(at).err();
  return at->read_header(options);
}

std::size_t element_chunk_bytes(safetensors::dtype t) { return chunk_elements * safetensors::dtype_bits(t) / 8; }

std::uint64_t total_tensor_bytes(const safetensors::file& f) { return f.header().data_size(); }

}  // namespace st_cli
