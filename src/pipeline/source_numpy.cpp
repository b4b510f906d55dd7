// SPDX-License-Identifier: Apache-2.0
// NumPy files (.npy, .npz) as a tensor_source. Names map 1:1 (an .npz member `w.npy` is
// tensor `w`; a lone .npy takes its file's stem).
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "safetensors/formats/npy.h"
#include "safetensors/formats/npz.h"
#include "safetensors/pipeline/tensor_source.h"
#include "safetensors/sniff.h"

namespace safetensors::pipeline {
namespace {

// The arrays of an .npy or .npz input behind one interface.
class numpy_input {
 public:
  struct array {
    std::string name;
    const safetensors::numpy::npy_header* header = nullptr;
    const safetensors::numpy::npz_array* member = nullptr;  // null for an .npy
  };

  static safetensors::result<numpy_input> open(const std::string& path,
                                               const safetensors::numpy::npz_options& options = {}) {
    auto format = safetensors::sniff_file(path);
    if (!format) return std::move(format).err();
    numpy_input in;
    if (*format == safetensors::file_format::npy) {
      auto npy = safetensors::numpy::npy_file::open(path);
      if (!npy) return std::move(npy).err();
      in.npy_.emplace(std::move(*npy));
      in.arrays_.push_back({std::filesystem::path(path).stem().string(), &in.npy_->header(), nullptr});
      return in;
    }
    auto npz = safetensors::numpy::npz_archive::open(path, options);
    if (!npz) return std::move(npz).err();
    in.npz_.emplace(std::move(*npz));
    for (const auto& a : in.npz_->arrays()) in.arrays_.push_back({a.name, &a.header, &a});
    return in;
  }

  [[nodiscard]] const std::vector<array>& arrays() const { return arrays_; }
  [[nodiscard]] bool is_npz() const { return npz_.has_value(); }

  /// Passes the array's SafeTensors bytes to `sink` in chunks (an .npz member is inflated
  /// as it goes, never held whole).
  safetensors::status stream(const array& a, const std::function<safetensors::status(std::span<const std::byte>)>& sink,
                             std::vector<std::byte>& buffer) const {
    if (npz_) return npz_->read_chunks(*a.member, sink);
    auto bytes = this->bytes(a, buffer);
    if (!bytes) return std::move(bytes).err();
    constexpr std::size_t chunk = std::size_t{1} << 20;
    for (std::size_t at = 0; at < bytes->size(); at += chunk) {
      if (auto s = sink(bytes->subspan(at, std::min(chunk, bytes->size() - at))); !s) return s;
    }
    return {};
  }

  /// The array's SafeTensors bytes: a view into the input when possible, else `buffer`.
  safetensors::result<std::span<const std::byte>> bytes(const array& a, std::vector<std::byte>& buffer) const {
    auto view = npz_ ? npz_->view(*a.member) : npy_->view();
    if (view) return *view;
    buffer.resize(a.header->data_bytes);
    auto s = npz_ ? npz_->read(*a.member, buffer) : npy_->read(buffer);
    if (!s) return std::move(s).err();
    return std::span<const std::byte>(buffer);
  }

 private:
  std::optional<safetensors::numpy::npy_file> npy_;
  std::optional<safetensors::numpy::npz_archive> npz_;
  std::vector<array> arrays_;
};

// An .npy or .npz input as a tensor_source.
class numpy_source final : public tensor_source {
 public:
  numpy_source(const std::string& path, numpy_input in) : in_(std::move(in)) {
    format_ = in_.is_npz() ? "NumPy .npz" : "NumPy .npy";
    path_ = path;
    for (const auto& a : in_.arrays()) tensors_.push_back({a.name, a.header->type, a.header->shape});
  }

  // Chunk by chunk: an .npz member is inflated as it is read (within the zip-bomb limits
  // the archive was opened with), never held whole.
  safetensors::status read(std::size_t index, const chunk_sink& consume) const override {
    std::vector<std::byte> buffer;
    return in_.stream(in_.arrays()[index], consume, buffer);
  }

 private:
  numpy_input in_;
};

}  // namespace

result<source_ptr> open_numpy_source(const std::string& path, const numpy::npz_options& npz) {
  auto in = numpy_input::open(path, npz);
  if (!in) return std::move(in).err().with_path(path);
  return source_ptr(std::make_unique<numpy_source>(path, std::move(in).value()));
}

}  // namespace safetensors::pipeline
