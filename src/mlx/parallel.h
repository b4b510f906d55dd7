// SPDX-License-Identifier: Apache-2.0
// Internal: splits a row range over a bounded number of std::threads.
#pragma once

#include <cstdint>
#include <functional>

namespace safetensors::mlx::detail {

/// Calls fn(begin, end) over [0, rows) split into contiguous ranges, on up to `threads`
/// threads (0 = min(hardware threads, 8)); one thread when the work is small
/// (`elements` in total below a few million). Never throws: if a thread cannot be
/// started, its range runs on the caller's thread.
void parallel_rows(std::uint64_t rows, std::uint64_t elements, unsigned threads,
                   const std::function<void(std::uint64_t, std::uint64_t)>& fn) noexcept;

}  // namespace safetensors::mlx::detail
