// SPDX-License-Identifier: Apache-2.0
// Reading a .npy file through a read-only mapping.
#include <fmt/format.h>

#include "formats/numpy/mapped_bytes.h"
#include "safetensors/formats/npy.h"

namespace safetensors {

struct npy_file::state {
  std::string path;
  detail::mapped_bytes mapping;
  npy_header header;
  [[nodiscard]] std::span<const std::byte> data() const {
    return mapping.bytes().subspan(header.data_offset, header.data_bytes);
  }
};

npy_file::npy_file(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
npy_file::npy_file(npy_file&&) noexcept = default;
npy_file& npy_file::operator=(npy_file&&) noexcept = default;
npy_file::~npy_file() = default;

result<npy_file> npy_file::open(const std::string& path, const npy_options& options) {
  auto mapping = detail::mapped_bytes::open(path);
  if (!mapping) return std::move(mapping).err();
  auto h = parse_npy_header(mapping->bytes(), options);
  if (!h) {
    error e = std::move(h).err();
    e.path = path;
    return e;
  }
  const std::uint64_t available = mapping->bytes().size() - h->data_offset;
  if (available != h->data_bytes) {
    error e = make_error(error_code::invalid_format,
                         fmt::format("the header's {} {} array needs {} data bytes, the file holds {}", h->descr,
                                     dtype_name(h->type), h->data_bytes, available),
                         h->data_offset);
    e.path = path;
    return e;
  }
  return npy_file(std::unique_ptr<state>(new state{path, std::move(*mapping), std::move(*h)}));
}

const npy_header& npy_file::header() const noexcept { return state_->header; }
const std::string& npy_file::path() const noexcept { return state_->path; }

std::optional<std::span<const std::byte>> npy_file::view() const& {
  const auto data = state_->data();
  const auto width = std::max<std::size_t>(1, dtype_bits(state_->header.type) / 8);
  if (!state_->header.is_c_order_little_endian() || reinterpret_cast<std::uintptr_t>(data.data()) % width != 0) {
    return std::nullopt;
  }
  return data;
}

status npy_file::read(std::span<std::byte> out) const {
  auto s = npy_to_c_order(state_->header, state_->data(), out);
  if (!s) {
    error e = std::move(s).err();
    e.path = state_->path;
    return e;
  }
  return {};
}

}  // namespace safetensors
