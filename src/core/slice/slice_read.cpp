// SPDX-License-Identifier: Apache-2.0
// Executing a slice plan into caller memory.
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "safetensors/multi_range_reader.h"
#include "slice/read_ranges.h"

namespace safetensors {
namespace {

/// Ranges closer than this may be fetched by one read through a bounce buffer: one system
/// call (or request) per tiny range, e.g. a column of a matrix, would dominate.
constexpr std::uint64_t window_bytes = std::uint64_t{1} << 20;
/// A local file (pread) reads gaps only while they stay within 1/local_max_waste of the
/// wanted bytes: a tensor-parallel rank reads its own bytes, not its neighbours' (issue 38:
/// at world 2 the old rule below read the whole of a row-split tensor), and a pread per
/// run of 4 KiB or more is as fast as copying the gaps out of the page cache
/// (bench/load_bench.cpp, BM_RankRead).
constexpr std::uint64_t local_max_waste = 20;
/// A range reader without multi-range requests (one round trip per read) reads gaps while
/// at least 1/reader_min_density of the window is wanted.
constexpr std::uint64_t reader_min_density = 2;

/// Whether one read of [first, last] is worth its gaps: `wanted` of its `span` bytes are wanted.
bool worth_one_read(const file& f, std::uint64_t wanted, std::uint64_t span) {
  if (f.backend() == io_backend::pread) return (span - wanted) * local_max_waste <= wanted;
  return wanted * reader_min_density >= span;
}

}  // namespace

status read_slice(const file& f, const slice_plan& plan, std::span<std::byte> destination) {
  if (destination.size() != plan.byte_size) {
    return make_error(error_code::invalid_argument,
                      fmt::format("destination has {} bytes, the slice has {}", destination.size(), plan.byte_size))
        .with_path(f.path());
  }
  return detail::read_ranges(f, plan.ranges, destination);
}

namespace detail {

status read_ranges(const file& f, std::span<const byte_range> r, std::span<std::byte> destination) {
  // A range reader (a remote file) gets the whole list: many ranges travel in one request.
  const auto* multi = dynamic_cast<const multi_range_reader*>(f.reader().get());
  if (multi != nullptr && r.size() > 1) {
    for (const byte_range& range : r) {
      if (range.offset > f.file_size() || range.length > f.file_size() - range.offset) {
        return make_error(error_code::invalid_argument,
                          fmt::format("range of {} bytes at byte {} is outside the file of {} bytes", range.length,
                                      range.offset, f.file_size()),
                          range.offset)
            .with_path(f.path());
      }
    }
    return multi->read_ranges(r, destination);
  }
  std::vector<std::byte> bounce;
  std::size_t out = 0;
  for (std::size_t i = 0; i < r.size();) {
    // Extend a window over following ranges that ascend and stay within window_bytes.
    std::size_t j = i + 1;
    if (!f.resident()) {
      std::uint64_t useful = r[i].length;
      while (j < r.size() && r[j].offset >= r[j - 1].offset + r[j - 1].length &&
             r[j].offset + r[j].length - r[i].offset <= window_bytes &&
             worth_one_read(f, useful + r[j].length, r[j].offset + r[j].length - r[i].offset)) {
        useful += r[j].length;
        ++j;
      }
    }
    if (j == i + 1) {
      if (auto s = f.read_range(r[i].offset, destination.subspan(out, r[i].length)); !s) return s;
      out += r[i].length;
      i = j;
      continue;
    }
    const std::uint64_t base = r[i].offset;
    bounce.resize(r[j - 1].offset + r[j - 1].length - base);
    if (auto s = f.read_range(base, bounce); !s) return s;
    for (; i < j; ++i) {
      std::memcpy(destination.data() + out, bounce.data() + (r[i].offset - base), r[i].length);
      out += r[i].length;
    }
  }
  return {};
}

}  // namespace detail
}  // namespace safetensors
