// SPDX-License-Identifier: Apache-2.0
// Turning numpy-style indexers into a plan of byte ranges.
#include <fmt/format.h>

#include "safetensors/slice.h"

namespace safetensors {
namespace {

__extension__ typedef __int128 wide;  // indices of u64 dimensions with i64 bounds

/// One dimension after normalisation: positions start + i * step for i < count.
struct dim_selection {
  std::uint64_t size = 0;
  std::uint64_t start = 0;
  std::int64_t step = 1;
  std::uint64_t count = 0;
  bool keep = true;
};

error slice_error(const tensor_info& t, std::string message) {
  return make_error(error_code::invalid_slice, std::move(message), std::nullopt, std::string(t.name));
}

/// numpy's slice.indices(size) and the resulting length.
dim_selection normalise_range(const slice_index& s, std::uint64_t size) {
  const wide n = static_cast<wide>(size);
  const wide step = s.step;
  const wide lower = step < 0 ? -1 : 0;
  const wide upper = step < 0 ? n - 1 : n;
  auto clamp = [&](std::optional<std::int64_t> v, wide fallback) {
    if (!v) return fallback;
    wide x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = lower;
    } else if (x >= upper) {
      x = upper;
    }
    return x;
  };
  const wide start = clamp(s.start, step < 0 ? upper : lower);
  const wide stop = clamp(s.stop, step < 0 ? lower : upper);
  wide count = 0;
  if (step > 0 && start < stop) count = (stop - start - 1) / step + 1;
  if (step < 0 && stop < start) count = (start - stop - 1) / -step + 1;
  dim_selection d;
  d.size = size;
  d.count = static_cast<std::uint64_t>(count);
  d.start = count > 0 ? static_cast<std::uint64_t>(start) : 0;
  d.step = count > 1 ? s.step : 1;  // a step over at most one element is irrelevant
  return d;
}

}  // namespace

result<slice_plan> plan_slice(const tensor_info& tensor, std::uint64_t data_start,
                              std::span<const slice_index> indexers) {
  const std::size_t rank = tensor.shape.size();
  std::size_t explicit_count = 0;
  std::size_t ellipses = 0;
  for (const slice_index& s : indexers) {
    if (s.type == slice_index::kind::ellipsis) {
      ++ellipses;
    } else {
      ++explicit_count;
    }
    if (s.type == slice_index::kind::range && s.step == 0) return slice_error(tensor, "slice step cannot be zero");
  }
  if (ellipses > 1) return slice_error(tensor, "an index can only have a single ellipsis ('...')");
  if (explicit_count > rank) {
    return slice_error(tensor,
                       fmt::format("too many indices: {} given, the tensor has {} dimensions", explicit_count, rank));
  }

  // One selection per dimension, the ellipsis expanded to full ranges.
  std::vector<dim_selection> dims;
  dims.reserve(rank);
  for (const slice_index& s : indexers) {
    if (s.type == slice_index::kind::ellipsis) {
      for (std::size_t k = 0; k < rank - explicit_count; ++k) {
        dims.push_back(normalise_range(slice_index::all(), tensor.shape[dims.size()]));
      }
      continue;
    }
    const std::size_t d = dims.size();
    const std::uint64_t size = tensor.shape[d];
    if (s.type == slice_index::kind::index) {
      wide i = s.index;
      if (i < 0) i += static_cast<wide>(size);
      if (i < 0 || i >= static_cast<wide>(size)) {
        return slice_error(tensor,
                           fmt::format("index {} is out of bounds for dimension {} with size {}", s.index, d, size));
      }
      dim_selection sel;
      sel.size = size;
      sel.start = static_cast<std::uint64_t>(i);
      sel.count = 1;
      sel.keep = false;
      dims.push_back(sel);
    } else {
      dims.push_back(normalise_range(s, size));
    }
  }
  while (dims.size() < rank) dims.push_back(normalise_range(slice_index::all(), tensor.shape[dims.size()]));

  slice_plan plan;
  plan.type = tensor.type;
  bool empty = false;
  for (const dim_selection& d : dims) {
    if (d.keep) plan.shape.push_back(d.count);
    empty = empty || d.count == 0;
  }
  if (empty) return plan;  // also avoids strides of size-0 tensors, which may overflow

  // Every dimension is non-empty, so the element count (validated) bounds all strides.
  std::vector<std::uint64_t> stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * dims[d].size;

  // The innermost dimensions read as one run per chunk: dimension k with step 1 and
  // every dimension after it taken whole.
  std::size_t k = rank;
  if (rank > 0 && dims[rank - 1].step == 1) {
    k = rank - 1;
    auto whole = [&](std::size_t d) { return dims[d].start == 0 && dims[d].count == dims[d].size; };
    while (k > 0 && whole(k) && dims[k - 1].step == 1) --k;
  }
  const std::uint64_t chunk_elements = k == rank ? 1 : dims[k].count * stride[k];
  const std::uint64_t chunk_base = k == rank ? 0 : dims[k].start * stride[k];
  std::uint64_t chunks = 1;
  for (std::size_t d = 0; d < k; ++d) {
    if (__builtin_mul_overflow(chunks, dims[d].count, &chunks) || chunks > max_slice_ranges) {
      return make_error(
          error_code::limit_exceeded,
          fmt::format("limit exceeded: the slice needs more than {} separate byte ranges", max_slice_ranges),
          std::nullopt, std::string(tensor.name));
    }
  }

  // Element-space runs, merged when adjacent, each turned into bytes when it closes.
  const std::uint64_t bits = dtype_bits(tensor.type);
  std::uint64_t run_first = 0;
  std::uint64_t run_count = 0;
  auto close_run = [&]() -> std::optional<error> {
    if (run_count == 0) return std::nullopt;
    const std::uint64_t bit_begin = run_first * bits;
    const std::uint64_t bit_length = run_count * bits;
    if (bit_begin % 8 != 0 || bit_length % 8 != 0) {
      return make_error(error_code::misaligned_slice,
                        fmt::format("the slice splits bytes of a {}-bit dtype: elements [{}, {}) do not start and "
                                    "end on byte boundaries",
                                    bits, run_first, run_first + run_count),
                        std::nullopt, std::string(tensor.name));
    }
    plan.ranges.push_back({data_start + tensor.begin + bit_begin / 8, bit_length / 8});
    plan.byte_size += bit_length / 8;
    return std::nullopt;
  };
  std::vector<std::uint64_t> counter(k, 0);
  for (std::uint64_t c = 0; c < chunks; ++c) {
    wide element = chunk_base;
    for (std::size_t d = 0; d < k; ++d) {
      element += (static_cast<wide>(dims[d].start) + static_cast<wide>(counter[d]) * dims[d].step) *
                 static_cast<wide>(stride[d]);
    }
    const auto first = static_cast<std::uint64_t>(element);
    if (run_count > 0 && run_first + run_count == first) {
      run_count += chunk_elements;
    } else {
      if (auto e = close_run()) return std::move(*e);
      run_first = first;
      run_count = chunk_elements;
    }
    for (std::size_t d = k; d-- > 0;) {  // odometer, last dimension fastest
      if (++counter[d] < dims[d].count) break;
      counter[d] = 0;
    }
  }
  if (auto e = close_run()) return std::move(*e);
  return plan;
}

result<slice_plan> plan_slice(const file& f, std::string_view tensor, std::span<const slice_index> indexers) {
  const tensor_info* info = f.find(tensor);
  if (info == nullptr) {
    return make_error(error_code::tensor_not_found, fmt::format("tensor '{}' not found", tensor), std::nullopt,
                      std::string(tensor))
        .with_path(f.path());
  }
  auto plan = plan_slice(*info, f.header().data_start(), indexers);
  if (!plan) {
    return std::move(plan).err().with_path(f.path());
  }
  return plan;
}

index_range split_evenly(std::uint64_t size, std::uint64_t rank, std::uint64_t world_size) noexcept {
  if (world_size == 0 || rank >= world_size) return {};
  const std::uint64_t base = size / world_size;
  const std::uint64_t extra = size % world_size;
  const std::uint64_t start = rank * base + std::min(rank, extra);
  return {start, start + base + (rank < extra ? 1 : 0)};
}

result<slice_plan> plan_tensor_parallel(const tensor_info& tensor, std::uint64_t data_start, std::size_t dim,
                                        std::uint64_t rank, std::uint64_t world_size) {
  if (dim >= tensor.shape.size()) {
    return slice_error(
        tensor, fmt::format("cannot split dimension {} of a tensor with {} dimensions", dim, tensor.shape.size()));
  }
  if (world_size == 0 || rank >= world_size) {
    return slice_error(tensor, fmt::format("rank {} is not in a world of size {}", rank, world_size));
  }
  const index_range part = split_evenly(tensor.shape[dim], rank, world_size);
  std::vector<slice_index> indexers(dim, slice_index::all());
  // Bounds past INT64_MAX cannot be written as indexers; such a dimension only exists
  // in a size-0 tensor, where the clamped full range is just as empty.
  constexpr auto max_index = static_cast<std::uint64_t>(INT64_MAX);
  indexers.push_back(slice_index::range(static_cast<std::int64_t>(std::min(part.start, max_index)),
                                        static_cast<std::int64_t>(std::min(part.stop, max_index))));
  return plan_slice(tensor, data_start, indexers);
}

}  // namespace safetensors
