// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/tensor_source.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>

#include "safetensors/glob.h"
#include "safetensors/pipeline/chunk_cast.h"
#include "safetensors/pipeline/format_table.h"
#include "safetensors/sniff.h"
#include "source_decorator.h"

namespace safetensors::pipeline {

std::uint64_t source_tensor::byte_size() const { return safetensors::byte_size(type, shape).bytes; }

std::uint64_t source_tensor::element_count() const {
  return std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<>());
}

result<source_ptr> open_source(const std::string& path, const source_options& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".index.json")) {
    return open_pytorch_source(path, options);
  }
  auto row = format_of_file(path);
  if (!row) return std::move(row).err().with_path(path);
  if (*row != nullptr && (*row)->open) return (*row)->open(path, options);
  auto verdict = sniff_file(path);
  if (!verdict) return std::move(verdict).err().with_path(path);
  if (*verdict == file_format::unknown) {
    return make_error(error_code::invalid_format, "not a SafeTensors, PyTorch, NumPy (.npy/.npz) or GGUF file")
        .with_path(path);
  }
  return make_error(error_code::unsupported, fmt::format("cannot convert a {} file (supported: SafeTensors, "
                                                         "PyTorch .pt/.bin, NumPy .npy/.npz, GGUF)",
                                                         file_format_name(*verdict)))
      .with_path(path);
}

status read_tensor_chunks(const file& f, const tensor_info& t, std::vector<std::byte>& buffer,
                          const chunk_sink& consume, std::size_t max_bytes) {
  const std::uint64_t start = f.header().data_start() + t.begin;
  const std::uint64_t size = t.byte_size();
  buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(size, max_bytes)));
  for (std::uint64_t done = 0; done < size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, max_bytes));
    std::span<std::byte> piece(buffer.data(), n);
    if (auto s = f.read_range(start + done, piece); !s) {
      error e = std::move(s).err();
      e.tensor = std::string(t.name);
      return e;
    }
    if (auto s = consume(piece); !s) return s;
    done += n;
  }
  return {};
}

namespace {

// Sub-byte types come in groups that fill whole bytes (F4: 2 elements, F6: 4): conversion
// takes whole groups, so a chunk's tail that splits one waits for the next chunk.
std::size_t group_bytes(dtype t) {
  const unsigned bits = dtype_bits(t);
  const unsigned elements = 8 / std::gcd(bits, 8U);
  return bits * elements / 8;
}

class casting_source final : public source_decorator {
 public:
  casting_source(source_ptr inner, dtype to, const tensor_filter& which, const encode_options& encode)
      : source_decorator(std::move(inner)), encode_(encode) {
    std::size_t cast = 0;
    for (auto& t : tensors_) {
      if (castable(t.type) && t.type != to && which.selects(t.name)) {
        t.type = to;
        ++cast;
      }
    }
    if (cast > 0) notes_.push_back(fmt::format("cast {} of {} tensors to {}", cast, tensors_.size(), dtype_name(to)));
  }

  status read(std::size_t index, const chunk_sink& consume) const override {
    const dtype from = inner_->tensors()[index].type;
    const dtype to = tensors_[index].type;
    if (from == to) return inner_->read(index, consume);
    const std::size_t group = group_bytes(from);
    std::vector<std::byte> pending;  // the start of a split group
    std::vector<std::byte> converted;
    chunk_caster caster;
    auto convert = [&](std::span<const std::byte> whole) -> status {
      if (whole.empty()) return {};
      if (auto s = caster.cast(from, to, whole, converted, encode_); !s) {
        error e = std::move(s).err();
        if (!e.tensor) e.tensor = tensors_[index].name;
        return e;
      }
      return consume(converted);
    };
    auto s = inner_->read(index, [&](std::span<const std::byte> chunk) -> status {
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
      return make_error(error_code::invalid_format, "tensor data ends inside an element", std::nullopt,
                        tensors_[index].name);
    }
    return {};
  }

 private:
  encode_options encode_;
};

class observed final : public source_decorator {
 public:
  observed(source_ptr inner, progress_callback progress)
      : source_decorator(std::move(inner)), progress_(std::move(progress)), total_(total_bytes(*this)) {}

  status read(std::size_t index, const chunk_sink& consume) const override {
    return inner_->read(index, [&](std::span<const std::byte> chunk) -> status {
      if (auto s = consume(chunk); !s) return s;
      done_ += chunk.size();
      if (!progress_(done_, total_)) {
        return make_error(error_code::cancelled, "cancelled", std::nullopt, tensors_[index].name);
      }
      return {};
    });
  }

 private:
  progress_callback progress_;
  std::uint64_t total_;
  mutable std::uint64_t done_ = 0;
};

}  // namespace

result<source_ptr> cast_source(source_ptr inner, dtype to, const tensor_filter& which, const encode_options& encode) {
  if (!castable(to)) {
    return make_error(error_code::invalid_argument,
                      fmt::format("cannot cast to {}: expected a floating-point dtype", dtype_name(to)));
  }
  if (!which.selects_all()) {
    std::vector<std::string_view> names;
    for (const auto& t : inner->tensors()) names.push_back(t.name);
    if (auto s = which.require_matches(names, inner->path()); !s) return std::move(s).err();
  }
  return source_ptr(std::make_unique<casting_source>(std::move(inner), to, which, encode));
}

source_ptr observed_source(source_ptr inner, progress_callback progress) {
  if (!progress) return inner;
  return std::make_unique<observed>(std::move(inner), std::move(progress));
}

bool tensor_filter::selects(std::string_view name) const {
  const auto matches = [&](const std::string& pattern) { return name_matches(pattern, name); };
  return (only.empty() || std::any_of(only.begin(), only.end(), matches)) &&
         std::none_of(exclude.begin(), exclude.end(), matches);
}

status tensor_filter::require_matches(std::span<const std::string_view> names, const std::string& path) const {
  for (const auto* patterns : {&only, &exclude}) {
    for (const auto& pattern : *patterns) {
      if (std::any_of(names.begin(), names.end(), [&](std::string_view n) { return name_matches(pattern, n); })) {
        continue;
      }
      return make_error(error_code::tensor_not_found,
                        patterns == &only ? fmt::format("no tensor matches '{}'", pattern)
                                          : fmt::format("exclude pattern '{}' matches no tensor", pattern))
          .with_path(path);
    }
  }
  return {};
}

std::uint64_t total_bytes(const tensor_source& source) {
  std::uint64_t total = 0;
  for (const auto& t : source.tensors()) total += t.byte_size();
  return total;
}

}  // namespace safetensors::pipeline
