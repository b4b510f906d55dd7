// SPDX-License-Identifier: Apache-2.0
#include "safetensors/region_file.h"

#include <fmt/format.h>

namespace safetensors {

region_file::region_file(atomic_file out, std::vector<region> regions)
    : out_(std::move(out)), regions_(std::move(regions)), filled_(regions_.size(), 0) {}

result<region_file> region_file::create(const std::string& path, std::uint64_t file_size,
                                        std::span<const std::byte> header, std::vector<region> regions) {
  auto out = atomic_file::create(path, file_size);
  if (!out) return std::move(out).err();
  if (auto s = out->write_at(0, header); !s) return std::move(s).err();
  return region_file(std::move(out).value(), std::move(regions));
}

status region_file::append(std::size_t index, std::string_view name, std::span<const std::byte> chunk) {
  const region& r = regions_[index];
  std::uint64_t& filled = filled_[index];
  if (chunk.size() > r.size - filled) {
    error e = make_error(error_code::invalid_argument,
                         fmt::format("{} more bytes for tensor '{}' would exceed its {} bytes ({} written)",
                                     chunk.size(), name, r.size, filled),
                         std::nullopt, std::string(name));
    e.path = out_.target();
    abort();
    return e;
  }
  if (auto s = out_.write_at(r.offset + filled, chunk); !s) {
    error e = std::move(s).err();
    e.tensor = std::string(name);
    return e;
  }
  filled += chunk.size();
  return {};
}

error region_file::incomplete(std::size_t index, std::string_view name) {
  error e =
      make_error(error_code::invalid_argument,
                 fmt::format("tensor '{}' received {} of its {} bytes", name, filled_[index], regions_[index].size),
                 std::nullopt, std::string(name));
  e.path = out_.target();
  abort();
  return e;
}

}  // namespace safetensors
