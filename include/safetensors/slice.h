// SPDX-License-Identifier: Apache-2.0
/// \file slice.h
/// Reading part of a tensor with numpy indexing semantics, planned as byte ranges.
///
/// Per dimension: an integer (negative counts from the end; out of bounds is an error)
/// drops the dimension; a range start:stop:step keeps it, with numpy's clamping, negative
/// steps and possibly empty results; one `...` stands for all dimensions not otherwise
/// indexed; missing trailing indexers mean "all". Unlike the reference implementation the
/// step is honoured, stop < start gives an empty result, size-0 dimensions slice fine,
/// and no input crashes.
///
/// A plan lists absolute file byte ranges in output (row-major) order, merged where
/// contiguous; executing it copies them back to back into the caller's buffer. Sub-byte
/// dtypes (F4, F6_*) need every range to start and end on a byte: else MisalignedSlice.
///
/// Example:
///
///     auto spec = safetensors::parse_slice_spec("0:8, ::2, -1");
///     auto plan = safetensors::plan_slice(f, "w", *spec);
///     std::vector<std::byte> out(plan->byte_size);
///     auto s = safetensors::read_slice(f, *plan, out);
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/header.h"

namespace safetensors {

/// One indexer of one dimension (or `...`).
struct slice_index {
  enum class kind : std::uint8_t { index, range, ellipsis };
  kind type = kind::range;
  std::int64_t index = 0;             ///< for kind::index
  std::optional<std::int64_t> start;  ///< for kind::range; nullopt = numpy's default
  std::optional<std::int64_t> stop;
  std::int64_t step = 1;  ///< non-zero

  [[nodiscard]] static slice_index at(std::int64_t i) noexcept { return {kind::index, i, {}, {}, 1}; }
  [[nodiscard]] static slice_index range(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                                         std::int64_t step = 1) noexcept {
    return {kind::range, 0, start, stop, step};
  }
  [[nodiscard]] static slice_index all() noexcept { return {}; }
  [[nodiscard]] static slice_index ellipsis() noexcept { return {kind::ellipsis, 0, {}, {}, 1}; }
};

/// Parses "0:8, ::2, -1, ..." (optionally in brackets; a trailing comma is allowed; an
/// empty string selects everything). Errors: InvalidSlice naming the bad item.
[[nodiscard]] result<std::vector<slice_index>> parse_slice_spec(std::string_view text);

/// `length` bytes at absolute file offset `offset`.
struct byte_range {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  friend bool operator==(const byte_range&, const byte_range&) = default;
};

struct slice_plan {
  dtype type = dtype::U8;
  std::vector<std::uint64_t> shape;  ///< output shape (indexed dimensions dropped)
  std::vector<byte_range> ranges;    ///< in output order
  std::uint64_t byte_size = 0;       ///< sum of range lengths
};

/// Plans with more ranges than this (4,194,304; 64 MiB of plan) fail with LimitExceeded
/// instead of allocating (e.g. `::-1` on the last dimension of a huge tensor: one range
/// per element). A tensor-parallel column split needs one range per row.
inline constexpr std::uint64_t max_slice_ranges = std::uint64_t{1} << 22;

/// Plans a slice of a validated tensor whose data buffer starts at file offset
/// `data_start`. No I/O. Errors: InvalidSlice (too many indexers, two ellipses, zero
/// step, integer out of bounds), MisalignedSlice, LimitExceeded.
[[nodiscard]] result<slice_plan> plan_slice(const tensor_info& tensor, std::uint64_t data_start,
                                            std::span<const slice_index> indexers);
/// As above for a tensor of `f`. Errors also: TensorNotFound.
[[nodiscard]] result<slice_plan> plan_slice(const file& f, std::string_view tensor,
                                            std::span<const slice_index> indexers);

/// Copies the plan's ranges into `destination` (exactly `plan.byte_size` bytes) through
/// `f.read_range`: memcpy on mmap, pread (nearby small ranges read together) otherwise.
[[nodiscard]] status read_slice(const file& f, const slice_plan& plan, std::span<std::byte> destination);

/// Rows [start, stop) of a dimension of `size` given to `rank` of `world_size`: even
/// split; when uneven the first `size % world_size` ranks get one more (numpy's
/// array_split), and ranks past `size` get an empty range. Requires rank < world_size.
struct index_range {
  std::uint64_t start = 0;
  std::uint64_t stop = 0;
};
[[nodiscard]] index_range split_evenly(std::uint64_t size, std::uint64_t rank, std::uint64_t world_size) noexcept;

/// Tensor-parallel helper: the plan of `rank`'s part of `tensor` split along `dim`.
/// Errors: InvalidSlice (dim out of range, world_size 0, rank >= world_size), plus
/// plan_slice's.
[[nodiscard]] result<slice_plan> plan_tensor_parallel(const tensor_info& tensor, std::uint64_t data_start,
                                                      std::size_t dim, std::uint64_t rank, std::uint64_t world_size);

}  // namespace safetensors
