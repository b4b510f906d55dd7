// SPDX-License-Identifier: Apache-2.0
// Reading a .npy file: its preamble by pread, its data through a read-only mapping made
// when first wanted.
#include <fmt/format.h>

#include "formats/numpy/lazy_mapping.h"
#include "safetensors/formats/npy.h"
#include "safetensors/readonly_file.h"

namespace safetensors::numpy {

struct npy_file::state {
  std::string path;
  detail::lazy_mapping file;
  npy_header header;
  [[nodiscard]] result<std::span<const std::byte>> data() const {
    auto bytes = file.bytes();
    if (!bytes) return std::move(bytes).err();
    return bytes->subspan(header.data_offset, header.data_bytes);
  }
};

npy_file::npy_file(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
npy_file::npy_file(npy_file&&) noexcept = default;
npy_file& npy_file::operator=(npy_file&&) noexcept = default;
npy_file::~npy_file() = default;

result<npy_file> npy_file::open(const std::string& path, const npy_options& options) {
  auto file = readonly_file::open(path);
  if (!file) return std::move(file).err();
  auto preamble = detail::read_npy_preamble(*file, 0, file->size(), options);
  if (!preamble) return std::move(preamble).err().with_path(path);
  auto h = parse_npy_header(*preamble, options);
  if (!h) {
    return std::move(h).err().with_path(path);
  }
  const std::uint64_t available = file->size() - h->data_offset;
  if (available != h->data_bytes) {
    return make_error(error_code::invalid_format,
                      fmt::format("the header's {} {} array needs {} data bytes, the file holds {}", h->descr,
                                  dtype_name(h->type), h->data_bytes, available),
                      h->data_offset)
        .with_path(path);
  }
  return npy_file(
      std::unique_ptr<state>(new state{path, detail::lazy_mapping(std::move(file).value()), std::move(*h)}));
}

const npy_header& npy_file::header() const noexcept { return state_->header; }
const std::string& npy_file::path() const noexcept { return state_->path; }

std::optional<std::span<const std::byte>> npy_file::view() const& {
  const auto mapped = state_->data();
  if (!mapped) return std::nullopt;  // read() reports why
  const auto data = *mapped;
  const auto width = std::max<std::size_t>(1, dtype_bits(state_->header.type) / 8);
  if (!state_->header.is_c_order_little_endian() || reinterpret_cast<std::uintptr_t>(data.data()) % width != 0) {
    return std::nullopt;
  }
  return data;
}

status npy_file::read(std::span<std::byte> out) const {
  auto data = state_->data();
  if (!data) return std::move(data).err().with_path(state_->path);
  auto s = npy_to_c_order(state_->header, *data, out);
  if (!s) {
    return std::move(s).err().with_path(state_->path);
  }
  return {};
}

}  // namespace safetensors::numpy
