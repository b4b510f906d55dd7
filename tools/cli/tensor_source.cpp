// SPDX-License-Identifier: Apache-2.0
#include "tensor_source.h"

#include <filesystem>
#include <numeric>

#include <fmt/format.h>

#include "progress.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/sniff.h"
#include "values.h"

namespace st_cli {

namespace st = safetensors;

std::uint64_t source_tensor::byte_size() const { return st::byte_size(type, shape).bytes; }

std::uint64_t source_tensor::element_count() const {
  return std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<>());
}

st::result<source_ptr> open_tensor_source(const std::string& path, const source_options& options) {
  if (is_url(path)) return open_safetensors_source(path);  // remote reading knows SafeTensors only
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return open_pytorch_source(path, options);
  auto format = st::sniff_file(path);
  if (!format) return with_path(std::move(format).err(), path);
  switch (*format) {
    case st::file_format::safetensors: return open_safetensors_source(path);
    case st::file_format::pytorch_zip:
    case st::file_format::pickle: return open_pytorch_source(path, options);
    case st::file_format::npy:
    case st::file_format::npz: return open_numpy_source(path, options.npz);
    case st::file_format::gguf: return open_gguf_source(path);
    case st::file_format::unknown:
      return with_path(
          st::make_error(st::error_code::invalid_format, "not a SafeTensors, PyTorch, NumPy (.npy/.npz) or GGUF file"),
          path);
    default:
      return with_path(st::make_error(st::error_code::unsupported,
                                      fmt::format("cannot convert a {} file (supported: SafeTensors, PyTorch "
                                                  ".pt/.bin, NumPy .npy/.npz, GGUF)",
                                                  st::file_format_name(*format))),
                       path);
  }
}

namespace {

/// Copies the inner source's listing; subclasses change what they must.
class decorator : public tensor_source {
 public:
  explicit decorator(source_ptr inner) : inner_(std::move(inner)) {
    format_ = inner_->format();
    path_ = inner_->path();
    tensors_ = inner_->tensors();
    metadata_ = inner_->metadata();
    notes_ = inner_->notes();
    shard_bytes_ = inner_->shard_bytes();
  }

 protected:
  source_ptr inner_;
};

// Sub-byte types come in groups that fill whole bytes (F4: 2 elements, F6: 4): conversion
// takes whole groups, so a chunk's tail that splits one waits for the next chunk.
std::size_t group_bytes(st::dtype t) {
  const unsigned bits = st::dtype_bits(t);
  const unsigned elements = 8 / std::gcd(bits, 8U);
  return bits * elements / 8;
}

class casting_source final : public decorator {
 public:
  casting_source(source_ptr inner, st::dtype to) : decorator(std::move(inner)) {
    std::size_t cast = 0;
    for (auto& t : tensors_) {
      if (castable(t.type) && t.type != to) {
        t.type = to;
        ++cast;
      }
    }
    if (cast > 0)
      notes_.push_back(fmt::format("cast {} of {} tensors to {}", cast, tensors_.size(), st::dtype_name(to)));
  }

  st::status read(std::size_t index, const chunk_consumer& consume) const override {
    const st::dtype from = inner_->tensors()[index].type;
    const st::dtype to = tensors_[index].type;
    if (from == to) return inner_->read(index, consume);
    const std::size_t group = group_bytes(from);
    std::vector<std::byte> pending;  // the start of a split group
    std::vector<std::byte> converted;
    std::vector<float> scratch32;
    std::vector<double> scratch64;
    auto convert = [&](std::span<const std::byte> whole) -> st::status {
      if (whole.empty()) return {};
      if (auto s = convert_chunk(from, to, whole, scratch32, scratch64, converted); !s) {
        st::error e = std::move(s).err();
        if (!e.tensor) e.tensor = tensors_[index].name;
        return e;
      }
      return consume(converted);
    };
    auto s = inner_->read(index, [&](std::span<const std::byte> chunk) -> st::status {
      if (!pending.empty()) {
        const std::size_t take = std::min(group - pending.size(), chunk.size());
        pending.insert(pending.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(take));
        chunk = chunk.subspan(take);
        if (pending.size() < group) return {};
        if (auto c = convert(pending); !c) return c;
        pending.clear();
      }
      const std::size_t whole = chunk.size() / group * group;
      if (auto c = convert(chunk.first(whole)); !c) return c;
      pending.assign(chunk.begin() + static_cast<std::ptrdiff_t>(whole), chunk.end());
      return {};
    });
    if (!s) return s;
    if (!pending.empty()) {
      return st::make_error(st::error_code::invalid_format, "tensor data ends inside an element", std::nullopt,
                            tensors_[index].name);
    }
    return {};
  }
};

class counting_source final : public decorator {
 public:
  counting_source(source_ptr inner, progress& bar) : decorator(std::move(inner)), bar_(bar) {}

  st::status read(std::size_t index, const chunk_consumer& consume) const override {
    return inner_->read(index, [&](std::span<const std::byte> chunk) {
      bar_.advance(chunk.size());
      return consume(chunk);
    });
  }

 private:
  progress& bar_;
};

}  // namespace

source_ptr cast_source(source_ptr inner, st::dtype to) {
  return std::make_unique<casting_source>(std::move(inner), to);
}

source_ptr progress_source(source_ptr inner, progress& bar) {
  return std::make_unique<counting_source>(std::move(inner), bar);
}

std::uint64_t total_bytes(const tensor_source& source) {
  std::uint64_t total = 0;
  for (const auto& t : source.tensors()) total += t.byte_size();
  return total;
}

}  // namespace st_cli
