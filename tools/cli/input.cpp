// SPDX-License-Identifier: Apache-2.0
#include "input.h"

#include <algorithm>

#include <fmt/format.h>

#include "input_diagnosis.h"
#include "remote_input.h"

namespace st_cli {

safetensors::result<safetensors::file> open_input(const std::string& path) {
  if (is_url(path)) return open_url(path);
  safetensors::open_options options;
  options.backend = safetensors::io_backend::pread;
  auto f = safetensors::file::open(path, options);
  if (f) return f;
  return explain_input_error(std::move(f).err());
}

safetensors::status for_each_chunk(const safetensors::file& f, const safetensors::tensor_info& t,
                                   std::vector<std::byte>& buffer,
                                   const std::function<safetensors::status(std::span<const std::byte>)>& consume,
                                   std::size_t max_bytes) {
  const std::uint64_t start = f.meta().data_start() + t.begin;
  const std::uint64_t size = t.byte_size();
  buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(size, max_bytes)));
  for (std::uint64_t done = 0; done < size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, max_bytes));
    std::span<std::byte> piece(buffer.data(), n);
    if (auto s = f.read_range(start + done, piece); !s) {
      safetensors::error e = std::move(s).err();
      e.tensor = std::string(t.name);
      return e;
    }
    if (auto s = consume(piece); !s) return s;
    done += n;
  }
  return {};
}

safetensors::result<safetensors::header> read_input_header(const std::string& path,
                                                           const safetensors::parse_options& options) {
  if (is_url(path)) return read_url_header(path, options);
  return safetensors::read_header(path, options);
}

std::size_t element_chunk_bytes(safetensors::dtype t) { return chunk_elements * safetensors::dtype_bits(t) / 8; }

std::uint64_t total_tensor_bytes(const safetensors::file& f) { return f.meta().data_size(); }

}  // namespace st_cli
