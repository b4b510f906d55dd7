// SPDX-License-Identifier: Apache-2.0
// The .npy preamble NumPy writes, and atomic .npy output.
#include <fmt/format.h>

#include <limits>
#include <optional>

#include "safetensors/atomic_file.h"
#include "safetensors/formats/npy.h"

namespace safetensors::numpy {
namespace {

constexpr std::size_t data_alignment = 64;

std::string shape_literal(std::span<const std::uint64_t> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out += fmt::format("{}{}", i == 0 ? "" : ", ", shape[i]);
  }
  if (shape.size() == 1) out += ",";
  out += ")";
  return out;
}

}  // namespace

result<std::string> npy_encode_header(dtype type, std::span<const std::uint64_t> shape) {
  auto descr = npy_descr(type);
  if (!descr) {
    return make_error(error_code::unsupported, fmt::format("{} has no NumPy dtype", dtype_name(type)));
  }
  // NumPy's NPY_MAXDIMS: an array of more dimensions is written fine and read by no numpy.
  constexpr std::size_t numpy_max_dims = 64;
  if (shape.size() > numpy_max_dims) {
    return make_error(error_code::unsupported,
                      fmt::format("NumPy arrays have at most {} dimensions (32 before numpy 2.0); this one has {}",
                                  numpy_max_dims, shape.size()));
  }
  const std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", *descr, shape_literal(shape));
  // Version 1.0 (a u16 length: 64 dimensions take under 2 KB), padded so that magic + version +
  // length + header (ending in '\n') is a multiple of 64, as numpy writes it.
  constexpr std::size_t fixed = 10;
  const std::size_t unpadded = fixed + dict.size() + 1;
  const std::size_t total = (unpadded + data_alignment - 1) / data_alignment * data_alignment;
  const std::size_t length = total - fixed;
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(length & 0xFF));
  out.push_back(static_cast<char>((length >> 8) & 0xFF));
  out += dict;
  out.append(total - unpadded, ' ');
  out.push_back('\n');
  return out;
}

status write_npy(const std::string& path, dtype type, std::span<const std::uint64_t> shape,
                 std::span<const std::byte> data) {
  auto preamble = npy_encode_header(type, shape);
  if (!preamble) {
    return std::move(preamble).err().with_path(path);
  }
  const auto size = byte_size(type, shape);
  if (size.problem != size_problem::none || size.bytes != data.size()) {
    return make_error(error_code::invalid_argument, fmt::format("{} bytes of data for a {} array of {} bytes",
                                                                data.size(), dtype_name(type), size.bytes))
        .with_path(path);
  }
  auto out = safetensors::atomic_file::create(path, preamble->size() + data.size());
  if (!out) return std::move(out).err();
  if (auto s = out->write_at(0, std::as_bytes(std::span(*preamble))); !s) return s;
  if (auto s = out->write_at(preamble->size(), data); !s) return s;
  return out->commit();
}

struct npy_writer::state {
  std::optional<atomic_file> out;
  std::string path;
  std::uint64_t written = 0;  // file bytes so far, preamble included
  std::uint64_t size = 0;     // the whole file
};

npy_writer::npy_writer(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
npy_writer::npy_writer(npy_writer&&) noexcept = default;
npy_writer& npy_writer::operator=(npy_writer&&) noexcept = default;
npy_writer::~npy_writer() = default;

result<npy_writer> npy_writer::create(const std::string& path, dtype type, std::span<const std::uint64_t> shape) {
  auto preamble = npy_encode_header(type, shape);
  const auto size = byte_size(type, shape);
  if (preamble && size.problem != size_problem::none) {
    preamble = make_error(error_code::validation_overflow, "the array's byte size overflows");
  }
  if (!preamble) {
    return std::move(preamble).err().with_path(path);
  }
  auto s = std::make_unique<state>();
  s->path = path;
  s->size = preamble->size() + size.bytes;
  auto out = atomic_file::create(path, s->size);
  if (!out) return std::move(out).err();
  s->out.emplace(std::move(out).value());
  if (auto w = s->out->write_at(0, std::as_bytes(std::span(*preamble))); !w) return std::move(w).err();
  s->written = preamble->size();
  return npy_writer(std::move(s));
}

status npy_writer::append(std::span<const std::byte> chunk) {
  if (chunk.size() > state_->size - state_->written) {
    return make_error(error_code::invalid_argument, "more data than the array holds").with_path(state_->path);
  }
  if (auto s = state_->out->write_at(state_->written, chunk); !s) return s;
  state_->written += chunk.size();
  return {};
}

status npy_writer::commit() {
  if (state_->written != state_->size) {
    return make_error(error_code::invalid_argument,
                      fmt::format("{} bytes of the array's data missing", state_->size - state_->written))
        .with_path(state_->path);
  }
  return state_->out->commit();
}

}  // namespace safetensors::numpy
