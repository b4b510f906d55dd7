// SPDX-License-Identifier: Apache-2.0
// Phase 1 of writing: order, offsets and the padded header.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "header/header_json.h"
#include "json/utf8.h"
#include "safetensors/policy.h"
#include "safetensors/writer.h"

namespace safetensors {
namespace {

error bad_input(std::string message, std::optional<std::string> tensor = std::nullopt) {
  return make_error(error_code::invalid_argument, std::move(message), std::nullopt, std::move(tensor));
}

std::optional<error> check_utf8(std::string_view text, std::string_view what) {
  if (auto bad = detail::first_invalid_utf8(text)) {
    return bad_input(fmt::format("{} is not valid UTF-8 (byte {})", what, *bad));
  }
  return std::nullopt;
}

}  // namespace

result<write_plan> write_plan::make(std::vector<tensor_spec> tensors, const write_options& options) {
  const std::uint64_t align = options.alignment;
  if (align < 8 || (align & (align - 1)) != 0 || align > (1U << 20)) {
    return bad_input(fmt::format("alignment {} is not a power of two between 8 and 1048576", align));
  }
  if (options.metadata) {
    for (const auto& [k, v] : *options.metadata) {
      if (auto e = check_utf8(k, "a metadata key")) return *e;
      if (auto e = check_utf8(v, fmt::format("metadata value of '{}'", k))) return *e;
    }
  }
  write_plan plan;
  plan.tensors_.reserve(tensors.size());
  for (tensor_spec& spec : tensors) {
    if (spec.name == "__metadata__") {
      return bad_input("a tensor cannot be named '__metadata__': the file would be unreadable", spec.name);
    }
    if (auto e = check_utf8(spec.name, "tensor name")) {
      e->tensor = spec.name;
      return *e;
    }
    byte_size_result size = byte_size(spec.type, spec.shape);
    if (size.problem == size_problem::overflow) {
      return make_error(error_code::validation_overflow, "overflow computing buffer size from shape and dtype",
                        std::nullopt, spec.name);
    }
    if (size.problem == size_problem::not_whole_bytes) {
      return make_error(
          error_code::misaligned_slice,
          fmt::format("{} x {} does not fill whole bytes", dtype_name(spec.type), fmt::join(spec.shape, "x")),
          std::nullopt, spec.name);
    }
    planned_tensor t;
    t.name = std::move(spec.name);
    t.type = spec.type;
    t.shape = std::move(spec.shape);
    t.end = size.bytes;  // a size for now; offsets are assigned after sorting
    plan.tensors_.push_back(std::move(t));
  }
  std::sort(plan.tensors_.begin(), plan.tensors_.end(), [](const planned_tensor& a, const planned_tensor& b) {
    return a.type != b.type ? a.type > b.type : a.name < b.name;
  });
  plan.by_name_.resize(plan.tensors_.size());
  std::iota(plan.by_name_.begin(), plan.by_name_.end(), 0U);
  std::sort(plan.by_name_.begin(), plan.by_name_.end(),
            [&plan](std::uint32_t a, std::uint32_t b) { return plan.tensors_[a].name < plan.tensors_[b].name; });
  for (std::size_t i = 1; i < plan.by_name_.size(); ++i) {
    const std::string& name = plan.tensors_[plan.by_name_[i]].name;
    if (name == plan.tensors_[plan.by_name_[i - 1]].name) {
      return bad_input(fmt::format("duplicate tensor name '{}'", name), name);
    }
  }
  std::uint64_t offset = 0;
  for (planned_tensor& t : plan.tensors_) {
    const std::uint64_t size = t.end;
    t.begin = offset;
    if (__builtin_add_overflow(offset, size, &offset)) {
      return make_error(error_code::validation_overflow, "total data size overflows 64 bits", std::nullopt, t.name);
    }
    t.end = offset;
  }
  plan.data_size_ = offset;

  std::string json = detail::header_json(std::span<const planned_tensor>(plan.tensors_), options.metadata);
  const std::uint64_t padded_end = (8 + json.size() + align - 1) / align * align;
  const std::uint64_t n = padded_end - 8;
  if (n > limits::reference_max_header_bytes) {
    return make_error(error_code::header_too_large,
                      fmt::format("header of {} bytes exceeds the {}-byte limit readers enforce", n,
                                  limits::reference_max_header_bytes));
  }
  json.resize(n, ' ');
  plan.prefix_and_header_.reserve(padded_end);
  for (int i = 0; i < 8; ++i) plan.prefix_and_header_.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  plan.prefix_and_header_ += json;
  return plan;
}

const planned_tensor* write_plan::find(std::string_view name) const noexcept {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [this](std::uint32_t i, std::string_view n) { return tensors_[i].name < n; });
  if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

std::span<const std::byte> write_plan::header_bytes() const noexcept {
  return {reinterpret_cast<const std::byte*>(prefix_and_header_.data()), prefix_and_header_.size()};
}

}  // namespace safetensors
