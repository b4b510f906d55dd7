// SPDX-License-Identifier: Apache-2.0
// NumPy files (.npy, .npz) as a tensor_source. Names map 1:1 (an .npz member `w.npy` is
// tensor `w`; a lone .npy takes its file's stem).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "input_size.h"
#include "safetensors/formats/numpy_file.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {
namespace {

class numpy_source final : public tensor_source {
 public:
  numpy_source(const std::string& path, numpy::numpy_file in) : in_(std::move(in)) {
    format_ = in_.is_npz() ? "NumPy .npz" : "NumPy .npy";
    format_id_ = in_.is_npz() ? "npz" : "npy";
    path_ = path;
    for (const auto& a : in_.arrays()) tensors_.push_back({a.name, a.header->type, a.header->shape});
    // Members do not overlap (the zip reader refuses it), so the arrays hold no more than
    // the file, or than its deflated members inflate to, which the zip-bomb limits bound.
    input_bytes_ = std::max(detail::file_bytes(path), total_bytes(*this));
  }

  // Chunk by chunk: an .npz member is inflated as it is read (within the zip-bomb limits
  // the archive was opened with), never held whole.
  safetensors::status read(std::size_t index, const chunk_sink& consume) const override {
    return in_.read_chunks(in_.arrays()[index], consume);
  }

 private:
  numpy::numpy_file in_;
};

}  // namespace

result<source_ptr> open_numpy_source(const std::string& path, const numpy::npz_options& npz) {
  auto in = numpy::numpy_file::open(path, npz);
  if (!in) return std::move(in).err();
  return source_ptr(std::make_unique<numpy_source>(path, std::move(in).value()));
}

}  // namespace safetensors::pipeline
