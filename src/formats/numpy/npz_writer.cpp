// SPDX-License-Identifier: Apache-2.0
// .npz output: one `<name>.npy` zip entry per array, through the atomic zip writer.
#include <fmt/format.h>

#include <optional>
#include <set>

#include "formats/zip/zip_reader.h"
#include "formats/zip/zip_writer.h"
#include "safetensors/formats/npz.h"

namespace safetensors::numpy {

struct npz_writer::state {
  safetensors::detail::zip_writer zip;
  npz_write_options options;
  std::string path;
  std::set<std::string, std::less<>> names;
  std::string current;
  std::uint64_t remaining = 0;
  bool open = false;

  error fail(error_code code, std::string message, std::optional<std::string> tensor = std::nullopt) const {
    return make_error(code, std::move(message), std::nullopt, std::move(tensor)).with_path(path);
  }
};

npz_writer::npz_writer(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
npz_writer::npz_writer(npz_writer&&) noexcept = default;
npz_writer& npz_writer::operator=(npz_writer&&) noexcept = default;
npz_writer::~npz_writer() = default;

result<npz_writer> npz_writer::create(const std::string& path, const npz_write_options& options) {
  auto zip = safetensors::detail::zip_writer::create(path);
  if (!zip) return std::move(zip).err();
  auto s = std::unique_ptr<state>(new state{std::move(*zip), options, path, {}, {}, 0, false});
  return npz_writer(std::move(s));
}

status npz_writer::begin_array(std::string_view name, dtype type, std::span<const std::uint64_t> shape) {
  state& s = *state_;
  const std::string tensor(name);
  if (s.open && s.remaining != 0) {
    return s.fail(error_code::invalid_argument,
                  fmt::format("array started while '{}' still lacks {} bytes", s.current, s.remaining), tensor);
  }
  if (!safetensors::detail::is_confined_member_name(name)) {
    return s.fail(error_code::unsafe_path, "the name cannot be an .npz member (empty, absolute, '..' or '\\')", tensor);
  }
  if (!s.names.insert(tensor).second) return s.fail(error_code::invalid_argument, "duplicate array name", tensor);
  auto preamble = npy_encode_header(type, shape);
  if (!preamble) {
    error e = std::move(preamble).err();
    e.path = s.path;
    e.tensor = tensor;
    return e;
  }
  if (s.open) {
    if (auto e = s.zip.end_entry(); !e) return e;
    s.open = false;
  }
  if (auto e = s.zip.begin_entry(tensor + ".npy", s.options.compress); !e) return e;
  s.open = true;
  s.current = tensor;
  s.remaining = byte_size(type, shape).bytes;  // npy_encode_header succeeded: the size is valid
  return s.zip.write(std::as_bytes(std::span(*preamble)));
}

status npz_writer::append(std::span<const std::byte> chunk) {
  state& s = *state_;
  if (!s.open || chunk.size() > s.remaining) {
    return s.fail(error_code::invalid_argument,
                  fmt::format("{} bytes appended, {} expected", chunk.size(), s.open ? s.remaining : 0),
                  s.open ? std::optional(s.current) : std::nullopt);
  }
  s.remaining -= chunk.size();
  return s.zip.write(chunk);
}

status npz_writer::add_array(std::string_view name, dtype type, std::span<const std::uint64_t> shape,
                             std::span<const std::byte> data) {
  if (auto e = begin_array(name, type, shape); !e) return e;
  return append(data);
}

status npz_writer::commit() {
  state& s = *state_;
  if (s.open && s.remaining != 0) {
    return s.fail(error_code::invalid_argument, fmt::format("the array lacks {} bytes", s.remaining), s.current);
  }
  return s.zip.commit();
}

}  // namespace safetensors::numpy
