// SPDX-License-Identifier: Apache-2.0
// An .npy or .npz file behind one list of arrays. The arrays point into the npy_file /
// npz_archive held here, whose state lives behind a pointer, so they survive a move.
#include "safetensors/formats/numpy_file.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <utility>

#include "formats/numpy/send_chunks.h"
#include "safetensors/sniff.h"

namespace safetensors::numpy {

result<numpy_file> numpy_file::open(const std::string& path, const npz_options& options) {
  auto format = sniff_file(path);
  if (!format) return std::move(format).err().with_path(path);
  numpy_file in;
  if (*format == file_format::npy) {
    auto npy = npy_file::open(path);
    if (!npy) return std::move(npy).err().with_path(path);
    in.npy_.emplace(std::move(*npy));
    in.arrays_.push_back({std::filesystem::path(path).stem().string(), &in.npy_->header(), nullptr});
    return in;
  }
  auto npz = npz_archive::open(path, options);
  if (!npz) return std::move(npz).err().with_path(path);
  in.npz_.emplace(std::move(*npz));
  for (const auto& a : in.npz_->arrays()) in.arrays_.push_back({a.name, &a.header, &a});
  return in;
}

std::optional<std::uint64_t> numpy_file::data_offset(const array& a) const noexcept {
  if (npz_) return npz_->stored_data_offset(*a.member);
  return a.header->data_offset;
}

status numpy_file::read_chunks(const array& a, const chunk_sink& sink) const {
  constexpr std::size_t chunk = std::size_t{1} << 20;
  if (npz_) return npz_->read_chunks(*a.member, sink, chunk);
  std::vector<std::byte> converted;
  auto bytes = npy_->view();
  if (!bytes) {
    converted.resize(a.header->data_bytes);
    if (auto s = npy_->read(converted); !s) return s;
    bytes = std::span<const std::byte>(converted);
  }
  return detail::send_chunks(*bytes, chunk, sink);
}

}  // namespace safetensors::numpy
