// SPDX-License-Identifier: Apache-2.0
/// \file stats.h
/// Summary statistics of a tensor's values, accumulated chunk by chunk so a tensor of
/// any size is summarised in one pass with bounded memory.
#pragma once

#include <cstdint>
#include <span>

namespace safetensors {

/// Statistics over the values fed so far. min, max, mean and std cover the finite values
/// only (NaN and infinities are counted instead); with no finite value they are NaN.
struct tensor_stats {
  std::uint64_t count = 0;  ///< all values
  std::uint64_t nan = 0;
  std::uint64_t pos_inf = 0;
  std::uint64_t neg_inf = 0;
  std::uint64_t zeros = 0;  ///< +0 and -0
  double min = 0;
  double max = 0;
  double mean = 0;
  double std = 0;  ///< population standard deviation (numpy's default, ddof = 0)
};

/// Accumulates values in chunks. Each chunk's mean and squared deviations are merged
/// with Chan et al.'s pairwise formula, which stays accurate over billions of values.
class stats_accumulator {
 public:
  void add(std::span<const double> values) noexcept;
  void add(std::span<const float> values) noexcept;
  [[nodiscard]] tensor_stats result() const noexcept;

 private:
  template <class T>
  void add_values(std::span<const T> values) noexcept;
  tensor_stats s_;
  std::uint64_t finite_ = 0;
  double m2_ = 0;  // sum of squared deviations from the mean, over finite values
};

}  // namespace safetensors
