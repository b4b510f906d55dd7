// SPDX-License-Identifier: Apache-2.0
// stats_accumulator: one pass, per-chunk moments merged pairwise.
#include "safetensors/stats.h"

#include <cmath>
#include <limits>

namespace safetensors {

template <class T>
void stats_accumulator::add_values(std::span<const T> values) noexcept {
  // Chunk moments first (two passes over the chunk, which is in cache), then one merge.
  std::uint64_t n = 0;
  double sum = 0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (T raw : values) {
    const auto v = static_cast<double>(raw);
    if (std::isnan(v)) {
      ++s_.nan;
    } else if (std::isinf(v)) {
      ++(v > 0 ? s_.pos_inf : s_.neg_inf);
    } else {
      if (v == 0) ++s_.zeros;
      ++n;
      sum += v;
      // -0 sorts below +0, so min and max do not depend on the order of equal zeros.
      if (v < lo || (v == lo && std::signbit(v))) lo = v;
      if (v > hi || (v == hi && !std::signbit(v))) hi = v;
    }
  }
  s_.count += values.size();
  if (n == 0) return;
  const double mean = sum / static_cast<double>(n);
  double m2 = 0;
  for (T raw : values) {
    const auto v = static_cast<double>(raw);
    if (std::isfinite(v)) m2 += (v - mean) * (v - mean);
  }
  if (finite_ == 0) {
    s_.min = lo;
    s_.max = hi;
    s_.mean = mean;
    m2_ = m2;
    finite_ = n;
    return;
  }
  if (lo < s_.min || (lo == s_.min && std::signbit(lo))) s_.min = lo;
  if (hi > s_.max || (hi == s_.max && !std::signbit(hi))) s_.max = hi;
  const auto na = static_cast<double>(finite_);
  const auto nb = static_cast<double>(n);
  const double total = na + nb;
  const double delta = mean - s_.mean;
  s_.mean += delta * nb / total;
  m2_ += m2 + delta * delta * na * nb / total;
  finite_ += n;
}

void stats_accumulator::add(std::span<const double> values) noexcept { add_values(values); }
void stats_accumulator::add(std::span<const float> values) noexcept { add_values(values); }

tensor_stats stats_accumulator::result() const noexcept {
  tensor_stats out = s_;
  if (finite_ == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out.min = out.max = out.mean = out.std = nan;
  } else {
    out.std = std::sqrt(m2_ / static_cast<double>(finite_));
  }
  return out;
}

}  // namespace safetensors
