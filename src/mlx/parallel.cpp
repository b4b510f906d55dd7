// SPDX-License-Identifier: Apache-2.0
// Row-parallel loop for the MLX kernels.
#include "mlx/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace safetensors::mlx::detail {

void parallel_rows(std::uint64_t rows, std::uint64_t elements, unsigned threads,
                   const std::function<void(std::uint64_t, std::uint64_t)>& fn) noexcept {
  constexpr std::uint64_t min_elements_per_thread = 1U << 20;
  unsigned n = threads;
  if (n == 0) n = std::min(8U, std::max(1U, std::thread::hardware_concurrency()));
  n = static_cast<unsigned>(
      std::min<std::uint64_t>({n, rows, std::max<std::uint64_t>(1, elements / min_elements_per_thread)}));
  if (n <= 1) {
    if (rows > 0) fn(0, rows);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(n - 1);
  const std::uint64_t step = (rows + n - 1) / n;
  for (unsigned i = 1; i < n; ++i) {
    const std::uint64_t begin = std::min(rows, step * i);
    const std::uint64_t end = std::min(rows, begin + step);
    if (begin >= end) break;
    try {
      pool.emplace_back(fn, begin, end);
    } catch (...) {
      fn(begin, end);  // no thread available: do it here
    }
  }
  fn(0, std::min(rows, step));
  for (auto& t : pool) t.join();
}

}  // namespace safetensors::mlx::detail
