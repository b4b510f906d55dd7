// SPDX-License-Identifier: Apache-2.0
// Stages 6-7 of validation (offsets, sizes, end of file) and the header's arenas.
#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "header/header_builder.h"

namespace safetensors {
namespace {

/// File offset of a data-relative position, or nullopt when it does not fit u64.
std::optional<std::uint64_t> file_offset(std::uint64_t data_start, std::uint64_t relative) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(data_start, relative, &out)) return std::nullopt;
  return out;
}

error tensor_error(error_code code, std::string message, std::optional<std::uint64_t> offset, std::string_view name) {
  return make_error(code, std::move(message), offset, std::string(name));
}

/// Sorts `v` by `less`, a strict total order. Headers written by any common writer list
/// tensors in runs that are already in name order and in data order, so the runs are
/// found in one pass and merged (O(n log runs)) instead of sorting from scratch.
template <class Vector, class Less>
void sort_runs(Vector& v, Less less) {
  std::vector<std::size_t> bounds{0};
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (less(v[i], v[i - 1])) bounds.push_back(i);
  }
  if (bounds.size() == 1) return;  // already sorted
  if (bounds.size() > 64) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  bounds.push_back(v.size());
  while (bounds.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t r = 0; r + 2 < bounds.size(); r += 2) {
      const auto first = v.begin() + static_cast<std::ptrdiff_t>(bounds[r]);
      std::inplace_merge(first, v.begin() + static_cast<std::ptrdiff_t>(bounds[r + 1]),
                         v.begin() + static_cast<std::ptrdiff_t>(bounds[r + 2]), less);
      merged.push_back(bounds[r + 2]);
    }
    if (bounds.size() % 2 == 0) merged.push_back(bounds.back());  // an odd run left over
    bounds = std::move(merged);
  }
}

/// `a < b` as string_view compares them (bytes unsigned), eight bytes at a time: it runs
/// once per tensor on names that share long prefixes, where memcmp's call and set-up
/// cost more than the comparison.
bool name_less(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t x = 0;
      std::uint64_t y = 0;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y);  // first differing byte decides
    }
  }
  for (; i < n; ++i) {
    if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  }
  return a.size() < b.size();
}

/// Stage 6 on one tensor that should begin at `expected`: what is wrong, or nullopt.
std::optional<error> tile_error(const tensor_info& t, std::uint64_t expected, std::uint64_t data_start) {
  if (t.begin != expected || t.end < t.begin) {
    return tensor_error(error_code::invalid_offset,
                        fmt::format("invalid offset for tensor '{}': data_offsets [{}, {}], expected begin {}", t.name,
                                    t.begin, t.end, expected),
                        file_offset(data_start, t.begin), t.name);
  }
  byte_size_result size = byte_size(t.type, t.shape);
  if (size.problem == size_problem::overflow) {
    return tensor_error(error_code::validation_overflow,
                        "overflow computing buffer size from shape and/or element type",
                        file_offset(data_start, t.begin), t.name);
  }
  if (size.problem == size_problem::not_whole_bytes) {
    return tensor_error(
        error_code::misaligned_slice,
        fmt::format("{} tensor of {} elements does not fill whole bytes", dtype_name(t.type), t.element_count()),
        file_offset(data_start, t.begin), t.name);
  }
  if (t.end - t.begin != size.bytes) {
    return tensor_error(error_code::tensor_invalid_info,
                        fmt::format("invalid shape, data type, or offset for tensor: {} x {} needs {} bytes, "
                                    "data_offsets cover {}",
                                    dtype_name(t.type), fmt::join(t.shape, "x"), size.bytes, t.end - t.begin),
                        file_offset(data_start, t.begin), t.name);
  }
  return std::nullopt;
}

/// tile_error(t, expected, ...) == nullopt, inline and without a message: it runs once per
/// tensor. `bits` is dtype_bits(t.type).
bool tiles(const tensor_info& t, std::uint64_t expected, unsigned bits) noexcept {
  if (t.begin != expected || t.end < t.begin) return false;
  std::uint64_t count = 1;
  for (std::uint64_t d : t.shape) {
    if (__builtin_mul_overflow(count, d, &count)) return false;
  }
  std::uint64_t total_bits = 0;
  if (__builtin_mul_overflow(count, std::uint64_t{bits}, &total_bits) || total_bits % 8 != 0) return false;
  return total_bits / 8 == t.end - t.begin;
}

/// dtype_bits, remembered for the last dtype asked: files hold few dtypes.
class element_bits {
 public:
  unsigned of(dtype t) noexcept {
    if (t != type_ || bits_ == 0) {
      type_ = t;
      bits_ = dtype_bits(t);
    }
    return bits_;
  }

 private:
  dtype type_ = dtype::U8;
  unsigned bits_ = 0;
};

}  // namespace

std::uint64_t tensor_info::element_count() const noexcept { return safetensors::element_count(shape).value_or(0); }

const tensor_info* header::find(std::string_view name) const& noexcept {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [this](std::uint32_t i, std::string_view n) { return tensors_[i].name < n; });
  if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

void detail::header_builder::reuse(header& spare) noexcept {
  spare_ = &spare;
  tensors = std::move(spare.tensors_);
  tensors.clear();
  dims = std::move(spare.dims_);
  dims.clear();
}

result<header> detail::header_builder::finish(std::uint64_t header_length, std::uint64_t file_size,
                                              validation_policy policy) {
  header h;
  h.header_length_ = header_length;
  h.metadata_ = std::move(metadata);

  // Arena copies, in one pass that also builds the identity by-name index, checks whether
  // names arrive strictly increasing and offsets in data order (as any sorting writer makes
  // them), and runs stage 6 in JSON order. Names move out of the JSON parser's memory;
  // shapes point into the final `dims`. For large headers the records outgrow the caches,
  // so passes over them are what costs.
  std::size_t name_bytes = 0;
  for (const tensor_info& t : tensors) name_bytes += t.name.size();
  if (spare_ != nullptr) {
    h.by_name_ = std::move(spare_->by_name_);
    h.by_name_.clear();
    if (spare_->names_ != nullptr && spare_->names_capacity_ >= name_bytes) {  // a moved-from header has none
      h.names_ = std::move(spare_->names_);
      h.names_capacity_ = std::exchange(spare_->names_capacity_, 0);
    }
  }
  if (h.names_capacity_ < name_bytes) {
    h.names_.reset();  // before the new one: a recycled arena too small is not kept twice
    h.names_ = std::unique_ptr<char[], detail::array_deleter>(static_cast<char*>(detail::allocate_array(name_bytes)),
                                                              detail::array_deleter{name_bytes});
    h.names_capacity_ = name_bytes;
  }
  h.dims_ = std::move(dims);
  h.tensors_ = std::move(tensors);
  h.by_name_.reserve(h.tensors_.size());
  auto offsets_less = [&h](std::uint32_t a, std::uint32_t b) {  // ties by index: a stable sort
    const tensor_info& x = h.tensors_[a];
    const tensor_info& y = h.tensors_[b];
    if (x.begin != y.begin) return x.begin < y.begin;
    return x.end != y.end ? x.end < y.end : a < b;
  };
  constexpr std::size_t none = SIZE_MAX;
  std::size_t first_misfit = none;  // the first tensor, in JSON order, that does not tile
  std::uint64_t expected = 0;       // where the next tensor should begin
  element_bits bits;
  std::size_t names_at = 0;
  std::size_t dims_at = 0;
  bool strictly_increasing = true;
  bool in_data_order = true;
  std::string_view previous;
  for (std::uint32_t i = 0; i < h.tensors_.size(); ++i) {
    tensor_info& t = h.tensors_[i];
    // Names are compared where the parser left them: read back from the fresh copy, they
    // would wait for its stores to complete.
    const std::string_view source = t.name;
    if (i > 0) {
      if (strictly_increasing) strictly_increasing = name_less(previous, source);
      if (in_data_order) in_data_order = offsets_less(i - 1, i);
    }
    previous = source;
    char* name = h.names_.get() + names_at;
    if (!source.empty()) std::memcpy(name, source.data(), source.size());  // within name_bytes
    names_at += source.size();
    t.name = std::string_view(name, source.size());
    t.shape = std::span<const std::uint64_t>(h.dims_).subspan(dims_at, t.shape.size());
    dims_at += t.shape.size();
    h.by_name_.push_back(i);
    if (first_misfit == none) {
      if (tiles(t, expected, bits.of(t.type))) {
        expected = t.end;
      } else {
        first_misfit = i;
      }
    }
  }

  // Stage 5 (ours): duplicate tensor names, found through the by-name index lookups need
  // anyway. Names that arrive strictly increasing need neither a sort nor a second pass.
  if (!strictly_increasing) {
    auto name_less = [&h](std::uint32_t a, std::uint32_t b) {
      const int c = h.tensors_[a].name.compare(h.tensors_[b].name);
      return c != 0 ? c < 0 : a < b;
    };
    sort_runs(h.by_name_, name_less);
    for (std::size_t i = 1; i < h.by_name_.size(); ++i) {
      const tensor_info& t = h.tensors_[h.by_name_[i]];
      if (t.name == h.tensors_[h.by_name_[i - 1]].name) {
        return tensor_error(error_code::duplicate_key, fmt::format("duplicate tensor name '{}'", t.name), std::nullopt,
                            t.name);
      }
    }
  }

  // Stage 6: sort by (begin, end) and require the tensors to tile the buffer exactly.
  // Writers list tensors in data order (checked in the pass above, which also checked the
  // tiling): then nothing is left to do. Otherwise this pass runs in data order, and it
  // says what is wrong.
  const std::uint64_t data_start = h.data_start();
  if (!in_data_order || first_misfit != none) {
    std::vector<std::uint32_t> order;
    if (!in_data_order) {
      order.assign(h.by_name_.begin(), h.by_name_.end());  // any permutation will do: the order is strict and total
      sort_runs(order, offsets_less);
    }
    expected = 0;
    for (std::size_t k = 0; k < h.tensors_.size(); ++k) {
      const tensor_info& t = h.tensors_[in_data_order ? k : order[k]];
      if (auto e = tile_error(t, expected, data_start)) return std::move(*e);
      expected = t.end;
    }
    // Tensors are kept in data order: that is file order (usually JSON order already).
    if (!in_data_order) {
      detail::array<tensor_info> sorted;
      sorted.reserve(order.size());
      for (std::uint32_t i : order) sorted.push_back(h.tensors_[i]);
      std::vector<std::uint32_t> rank_of(order.size());
      for (std::uint32_t pos = 0; pos < order.size(); ++pos) rank_of[order[pos]] = pos;
      for (std::uint32_t& i : h.by_name_) i = rank_of[i];
      h.tensors_ = std::move(sorted);
    }
  }
  h.data_size_ = expected;

  // Stage 7: the buffer must end exactly at the end of the file. The sum is unchecked in
  // the reference's release build, so a wrapped sum is simply a mismatch.
  const std::uint64_t covered_end = expected + data_start;
  const bool wrapped = covered_end < expected;
  if (covered_end != file_size) {
    if (policy == validation_policy::lenient && !wrapped && covered_end < file_size) {
      h.warnings_.push_back(
          {fmt::format("{} trailing bytes after the last tensor", file_size - covered_end), covered_end});
    } else {
      // Tensors ending past the end of the file is what a cut-short download looks like.
      return make_error(error_code::metadata_incomplete_buffer,
                        wrapped ? std::string("incomplete metadata: tensors end past 2^64")
                        : covered_end > file_size
                            ? fmt::format("file is truncated: tensors end at byte {} but the file has {} bytes",
                                          covered_end, file_size)
                            : fmt::format("incomplete metadata, file not fully covered: {} bytes after the "
                                          "last tensor",
                                          file_size - covered_end),
                        wrapped ? std::nullopt : std::optional<std::uint64_t>(std::min(covered_end, file_size)));
    }
  }
  return h;
}

}  // namespace safetensors
