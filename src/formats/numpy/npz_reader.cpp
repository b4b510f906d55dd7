// SPDX-License-Identifier: Apache-2.0
// .npz input: the zip reader lists and inflates, the archive is mapped for zero-copy
// access to stored members (when their data is first wanted), and every member's .npy
// header is parsed up front (a stored member's read by pread).
#include <fmt/format.h>

#include <new>
#include <set>

#include "formats/numpy/lazy_mapping.h"
#include "formats/numpy/npy_descr.h"
#include "formats/numpy/send_chunks.h"
#include "formats/zip/zip_reader.h"
#include "safetensors/formats/npz.h"
#include "safetensors/readonly_file.h"

namespace safetensors::numpy {

struct npz_archive::state {
  std::string path;
  safetensors::detail::zip_reader zip;
  detail::lazy_mapping file;
  std::vector<npz_array> arrays;
  std::vector<std::optional<std::uint64_t>> stored_at;  // per array: its member's data offset

  [[nodiscard]] error fail(error e, const std::string& array) const {
    e.path = path;
    if (!e.tensor) e.tensor = array;
    return e;
  }
};

namespace {

constexpr std::string_view npy_suffix = ".npy";

// Inflates just the preamble of a compressed member (bounded by the header limit).
result<std::vector<std::byte>> read_preamble(safetensors::detail::zip_reader& zip,
                                             const safetensors::detail::zip_entry& entry, const npy_options& options) {
  std::vector<std::byte> bytes;
  std::uint64_t wanted = npy_prefix_bytes;
  bool have_size = false;
  bool stopped = false;  // read_chunks stops at the first error: one means "enough read"
  auto s = zip.read_chunks(entry, 4096, [&](std::span<const std::byte> chunk) -> status {
    bytes.insert(bytes.end(), chunk.begin(), chunk.end());
    if (!have_size && bytes.size() >= npy_prefix_bytes) {
      auto size = npy_preamble_size(bytes, options);
      if (!size) return std::move(size).err();
      wanted = *size;
      have_size = true;
    }
    if (have_size && bytes.size() >= wanted) {
      stopped = true;
      return make_error(error_code::io, "stop");
    }
    return {};
  });
  if (!s && !stopped) return std::move(s).err();
  return bytes;
}

error out_of_memory(const std::string& path, std::string_view doing) {
  return make_error(error_code::limit_exceeded, fmt::format("out of memory while {}", doing)).with_path(path);
}

/// Hands data to a sink in chunks whose size is a multiple of the element width, so that
/// big-endian elements can be swapped whole whatever the sizes of the chunks coming in.
class aligned_emitter {
 public:
  aligned_emitter(const npy_header& header, std::size_t chunk_bytes, const chunk_sink& sink)
      : header_(header), sink_(sink) {
    const std::size_t width = std::max<std::size_t>(1, dtype_bits(header.type) / 8);
    capacity_ = std::max(width, chunk_bytes / width * width);
    if (header.big_endian) buffer_.reserve(std::min<std::uint64_t>(capacity_, header.data_bytes));
  }

  status add(std::span<const std::byte> bytes) {
    if (!header_.big_endian) return bytes.empty() ? status{} : sink_(bytes);
    while (!bytes.empty()) {
      const std::size_t n = std::min(bytes.size(), capacity_ - buffer_.size());
      buffer_.insert(buffer_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      bytes = bytes.subspan(n);
      if (buffer_.size() == capacity_) {
        if (auto s = flush(); !s) return s;
      }
    }
    return {};
  }

  status flush() {
    if (buffer_.empty()) return {};
    detail::npy_swap_in_place(header_, buffer_);
    auto s = sink_(buffer_);
    buffer_.clear();
    return s;
  }

 private:
  const npy_header& header_;
  const chunk_sink& sink_;
  std::size_t capacity_ = 1;
  std::vector<std::byte> buffer_;
};

}  // namespace

npz_archive::npz_archive(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
npz_archive::npz_archive(npz_archive&&) noexcept = default;
npz_archive& npz_archive::operator=(npz_archive&&) noexcept = default;
npz_archive::~npz_archive() = default;

result<npz_archive> npz_archive::open(const std::string& path, const npz_options& options) {
  try {
    return open_archive(path, options);
  } catch (const std::bad_alloc&) {
    return out_of_memory(path, "opening the archive");
  }
}

result<npz_archive> npz_archive::open_archive(const std::string& path, const npz_options& options) {
  safetensors::detail::zip_limits limits;
  limits.max_expanded_bytes = options.max_expanded_bytes;
  limits.max_compression_ratio = options.max_compression_ratio;
  limits.ratio_floor_bytes = options.ratio_floor_bytes;
  auto zip = safetensors::detail::zip_reader::open(path, limits);
  if (!zip) return std::move(zip).err();
  auto file = readonly_file::open(path);
  if (!file) return std::move(file).err();
  auto s =
      std::unique_ptr<state>(new state{path, std::move(*zip), detail::lazy_mapping(std::move(file).value()), {}, {}});
  std::set<std::string, std::less<>> names;
  for (const safetensors::detail::zip_entry& entry : s->zip.entries()) {
    const std::string_view member = entry.name;
    if (member.size() <= npy_suffix.size() || !member.ends_with(npy_suffix)) {
      return s->fail(make_error(error_code::invalid_format, fmt::format("member '{}' is not a .npy array", member)),
                     entry.name);
    }
    npz_array array;
    array.name = std::string(member.substr(0, member.size() - npy_suffix.size()));
    array.member = entry.index;
    if (!names.insert(array.name).second) {
      return s->fail(make_error(error_code::invalid_format, "the archive holds this array twice"), array.name);
    }
    std::optional<std::uint64_t> stored_at;
    std::vector<std::byte> preamble;
    std::span<const std::byte> head;
    if (entry.stored) {
      auto at = s->zip.stored_data_offset(entry);
      if (!at) return s->fail(std::move(at).err(), array.name);
      stored_at = *at;
      const std::uint64_t size = s->file.file().size();
      auto bytes = detail::read_npy_preamble(
          s->file.file(), *at, *at > size ? 0 : std::min(entry.uncompressed_size, size - *at), options.npy);
      if (!bytes) return s->fail(std::move(bytes).err(), array.name);
      preamble = std::move(*bytes);
      head = preamble;
    } else {
      auto bytes = read_preamble(s->zip, entry, options.npy);
      if (!bytes) return s->fail(std::move(bytes).err(), array.name);
      preamble = std::move(*bytes);
      head = preamble;
    }
    auto header = parse_npy_header(head, options.npy);
    if (!header) {
      error e = std::move(header).err();
      if (stored_at && e.offset) *e.offset += *stored_at;  // a position in the archive file
      if (!stored_at) e.message += " (offset within the inflated member)";
      return s->fail(std::move(e), array.name);
    }
    if (entry.uncompressed_size - header->data_offset != header->data_bytes) {
      return s->fail(make_error(error_code::invalid_format,
                                fmt::format("the header's {} {} array needs {} data bytes, the member holds {}",
                                            header->descr, dtype_name(header->type), header->data_bytes,
                                            entry.uncompressed_size - header->data_offset)),
                     array.name);
    }
    array.header = std::move(*header);
    s->arrays.push_back(std::move(array));
    s->stored_at.push_back(stored_at);
  }
  return npz_archive(std::move(s));
}

std::span<const npz_array> npz_archive::arrays() const noexcept { return state_->arrays; }
const std::string& npz_archive::path() const noexcept { return state_->path; }

std::optional<std::uint64_t> npz_archive::stored_data_offset(const npz_array& array) const noexcept {
  const auto index = static_cast<std::size_t>(&array - state_->arrays.data());
  if (index >= state_->arrays.size() || !state_->stored_at[index]) return std::nullopt;
  return *state_->stored_at[index] + array.header.data_offset;
}

std::optional<std::span<const std::byte>> npz_archive::view(const npz_array& array) const& {
  const auto index = static_cast<std::size_t>(&array - state_->arrays.data());
  if (index >= state_->arrays.size() || !state_->stored_at[index] || !array.header.is_c_order_little_endian()) {
    return std::nullopt;
  }
  const auto mapped = state_->file.bytes();
  if (!mapped) return std::nullopt;  // read() reports why
  const auto data = mapped->subspan(*state_->stored_at[index] + array.header.data_offset, array.header.data_bytes);
  const auto width = std::max<std::size_t>(1, dtype_bits(array.header.type) / 8);
  if (reinterpret_cast<std::uintptr_t>(data.data()) % width != 0) return std::nullopt;
  return data;
}

status npz_archive::read(const npz_array& array, std::span<std::byte> out) const {
  try {
    return read_into(array, out);
  } catch (const std::bad_alloc&) {
    return state_->fail(out_of_memory(state_->path, "reading an array"), array.name);
  }
}

status npz_archive::read_chunks(const npz_array& array, const chunk_sink& sink, std::size_t chunk_bytes) const {
  try {
    return stream(array, sink, std::max<std::size_t>(chunk_bytes, 64));
  } catch (const std::bad_alloc&) {
    return state_->fail(out_of_memory(state_->path, fmt::format("reading a {}-byte array", array.header.data_bytes)),
                        array.name);
  }
}

status npz_archive::stream(const npz_array& array, const chunk_sink& sink, std::size_t chunk_bytes) const {
  state& s = *state_;
  const auto index = static_cast<std::size_t>(&array - s.arrays.data());
  if (index >= s.arrays.size()) return make_error(error_code::invalid_argument, "array of another archive");
  const npy_header& h = array.header;
  if (h.needs_transpose()) {  // reordering needs the whole array
    std::vector<std::byte> whole(h.data_bytes);
    if (auto ok = read_into(array, whole); !ok) return ok;
    return detail::send_chunks(whole, chunk_bytes, sink);
  }
  aligned_emitter emit(h, chunk_bytes, sink);
  if (s.stored_at[index]) {
    auto mapped = s.file.bytes();
    if (!mapped) return s.fail(std::move(mapped).err(), array.name);
    auto raw = mapped->subspan(*s.stored_at[index] + h.data_offset, h.data_bytes);
    for (std::size_t at = 0; at < raw.size(); at += chunk_bytes) {
      if (auto ok = emit.add(raw.subspan(at, std::min(chunk_bytes, raw.size() - at))); !ok) return ok;
    }
    return emit.flush();
  }
  std::uint64_t skip = h.data_offset;
  auto inflated =
      s.zip.read_chunks(s.zip.entries()[array.member], chunk_bytes, [&](std::span<const std::byte> chunk) -> status {
        const auto skipped = static_cast<std::size_t>(std::min<std::uint64_t>(skip, chunk.size()));
        skip -= skipped;
        return emit.add(chunk.subspan(skipped));
      });
  if (!inflated) return s.fail(std::move(inflated).err(), array.name);
  return emit.flush();
}

status npz_archive::read_into(const npz_array& array, std::span<std::byte> out) const {
  state& s = *state_;
  const auto index = static_cast<std::size_t>(&array - s.arrays.data());
  if (index >= s.arrays.size()) return make_error(error_code::invalid_argument, "array of another archive");
  const npy_header& h = array.header;
  if (out.size() != h.data_bytes) {
    return s.fail(make_error(error_code::invalid_argument,
                             fmt::format("buffer of {} bytes for a {}-byte array", out.size(), h.data_bytes)),
                  array.name);
  }
  if (s.stored_at[index]) {
    auto mapped = s.file.bytes();
    if (!mapped) return s.fail(std::move(mapped).err(), array.name);
    auto raw = mapped->subspan(*s.stored_at[index] + h.data_offset, h.data_bytes);
    return npy_to_c_order(h, raw, out);
  }
  const safetensors::detail::zip_entry& entry = s.zip.entries()[array.member];
  std::vector<std::byte> whole;  // Fortran order needs the whole array before reordering
  if (h.needs_transpose()) whole.resize(h.data_bytes);
  const std::span<std::byte> target = h.needs_transpose() ? std::span<std::byte>(whole) : out;
  std::uint64_t skip = h.data_offset;
  std::size_t at = 0;
  auto inflated = s.zip.read_chunks(entry, std::size_t{1} << 20, [&](std::span<const std::byte> chunk) -> status {
    const auto skipped = static_cast<std::size_t>(std::min<std::uint64_t>(skip, chunk.size()));
    skip -= skipped;
    chunk = chunk.subspan(skipped);
    std::copy(chunk.begin(), chunk.end(), target.begin() + static_cast<std::ptrdiff_t>(at));
    at += chunk.size();
    return {};
  });
  if (!inflated) return s.fail(std::move(inflated).err(), array.name);
  if (h.needs_transpose()) return npy_to_c_order(h, whole, out);
  detail::npy_swap_in_place(h, out);
  return {};
}

}  // namespace safetensors::numpy
