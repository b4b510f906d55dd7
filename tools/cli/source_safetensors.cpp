// SPDX-License-Identifier: Apache-2.0
// A SafeTensors file as a tensor_source: read with pread in bounded chunks.
#include "input.h"
#include "report.h"
#include "tensor_source.h"

namespace st_cli {
namespace {

namespace st = safetensors;

class safetensors_source final : public tensor_source {
 public:
  explicit safetensors_source(st::file f) : file_(std::move(f)) {
    format_ = "SafeTensors";
    path_ = file_.path();
    for (const auto& t : file_.tensors()) {
      tensors_.push_back({std::string(t.name), t.type, std::vector<std::uint64_t>(t.shape.begin(), t.shape.end())});
    }
    metadata_ = file_.meta().metadata();
  }

  st::status read(std::size_t index, const chunk_consumer& consume) const override {
    return for_each_chunk(file_, file_.tensors()[index], buffer_, consume);
  }

 private:
  st::file file_;
  mutable std::vector<std::byte> buffer_;
};

}  // namespace

st::result<source_ptr> open_safetensors_source(const std::string& path) {
  auto f = open_input(path);
  if (!f) return with_path(std::move(f).err(), path);
  return source_ptr(std::make_unique<safetensors_source>(std::move(f).value()));
}

}  // namespace st_cli
