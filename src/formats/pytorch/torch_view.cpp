// SPDX-License-Identifier: Apache-2.0
#include "formats/pytorch/torch_view.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace safetensors::torch {

bool tensor::contiguous() const noexcept {
  std::uint64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool same_view(const tensor& a, const tensor& b) noexcept {
  return a.storage == b.storage && a.storage_offset == b.storage_offset && a.type == b.type && a.shape == b.shape &&
         a.strides == b.strides;
}

std::vector<std::vector<std::size_t>> shared_storage_groups(std::span<const tensor> tensors) {
  std::map<std::size_t, std::vector<std::size_t>> by_storage;
  for (std::size_t i = 0; i < tensors.size(); ++i) by_storage[tensors[i].storage].push_back(i);
  std::vector<std::vector<std::size_t>> groups;
  for (auto& [storage, members] : by_storage) {
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return tensors[a].name < tensors[b].name; });
    groups.push_back(std::move(members));
  }
  return groups;
}

namespace detail {

std::size_t swap_unit(dtype t) noexcept { return t == dtype::C64 ? 4 : dtype_bits(t) / 8; }

namespace {

void swap_units(std::byte* data, std::size_t bytes, std::size_t unit) {
  if (unit <= 1) return;
  for (std::size_t i = 0; i + unit <= bytes; i += unit) std::reverse(data + i, data + i + unit);
}

}  // namespace

void swap_in_place(std::span<std::byte> data, std::size_t unit) noexcept { swap_units(data.data(), data.size(), unit); }

status copy_view(std::span<const std::byte> storage, const tensor& t, std::size_t swap_bytes, std::size_t chunk_bytes,
                 const chunk_sink& sink) {
  const std::size_t eb = dtype_bits(t.type) / 8;
  std::uint64_t count = 1;
  for (auto d : t.shape) count *= d;  // bounds-checked at open: no overflow
  if (count == 0) return {};
  // Runs: the innermost dimension when it is dense, else single elements.
  std::vector<std::uint64_t> shape = t.shape;
  std::vector<std::uint64_t> strides = t.strides;
  if (t.contiguous()) {
    shape = {count};
    strides = {1};
  } else if (shape.empty()) {
    shape = {1};
    strides = {1};
  }
  const std::size_t rank = shape.size();
  const bool dense_inner = strides[rank - 1] == 1;
  const std::uint64_t run = dense_inner ? shape[rank - 1] : 1;

  if (swap_bytes <= 1 && rank == 1 && dense_inner) {  // one run: straight from the storage
    auto bytes = storage.subspan(static_cast<std::size_t>(t.storage_offset * eb), static_cast<std::size_t>(count * eb));
    for (std::size_t pos = 0; pos < bytes.size(); pos += chunk_bytes) {
      if (auto ok = sink(bytes.subspan(pos, std::min(chunk_bytes, bytes.size() - pos))); !ok) return ok;
    }
    return {};
  }

  const std::size_t buffer_elems = std::max<std::size_t>(1, chunk_bytes / eb);
  std::vector<std::byte> buffer(std::min<std::uint64_t>(buffer_elems, count) * eb);
  std::size_t filled = 0;  // elements in buffer
  std::vector<std::uint64_t> index(rank, 0);
  auto flush = [&]() -> status {
    swap_units(buffer.data(), filled * eb, swap_bytes);
    auto ok = sink(std::span<const std::byte>(buffer.data(), filled * eb));
    filled = 0;
    return ok;
  };
  for (std::uint64_t done = 0; done < count;) {
    std::uint64_t element = t.storage_offset;
    for (std::size_t i = 0; i < rank; ++i) element += index[i] * strides[i];
    // Copy what is left of this run, as far as the buffer allows.
    const std::uint64_t in_run = run - (dense_inner ? index[rank - 1] : 0);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(in_run, buffer_elems - filled));
    std::memcpy(buffer.data() + filled * eb, storage.data() + element * eb, n * eb);
    filled += n;
    done += n;
    if (filled == buffer_elems || done == count) {
      if (auto ok = flush(); !ok) return ok;
    }
    // Advance the index by n elements in C order.
    std::uint64_t carry = n;
    for (std::size_t i = rank; i-- > 0 && carry > 0;) {
      std::uint64_t next = index[i] + carry;
      index[i] = next % shape[i];
      carry = next / shape[i];
    }
  }
  return {};
}

}  // namespace detail
}  // namespace safetensors::torch
