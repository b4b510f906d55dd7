// SPDX-License-Identifier: Apache-2.0
#include "safetensors/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

TEST(Stats, CountsAndMoments) {
  safetensors::stats_accumulator acc;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v{1, 2, 0, -0.0, std::nan(""), inf, -inf, 5};
  acc.add(v);
  auto s = acc.result();
  EXPECT_EQ(s.count, 8U);
  EXPECT_EQ(s.nan, 1U);
  EXPECT_EQ(s.pos_inf, 1U);
  EXPECT_EQ(s.neg_inf, 1U);
  EXPECT_EQ(s.zeros, 2U);
  EXPECT_EQ(s.min, -0.0);
  EXPECT_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 8.0 / 5);
  // population std of {1,2,0,0,5}: mean 1.6, squared deviations 0.36+0.16+2.56+2.56+11.56 = 17.2
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(17.2 / 5));
}

TEST(Stats, ChunkedEqualsWhole) {
  std::vector<float> v;
  for (int i = 0; i < 1000; ++i) v.push_back(static_cast<float>(1e6 + i * 0.25));
  safetensors::stats_accumulator whole;
  whole.add(v);
  safetensors::stats_accumulator chunked;
  for (std::size_t i = 0; i < v.size(); i += 37) {
    chunked.add(std::span<const float>(v).subspan(i, std::min<std::size_t>(37, v.size() - i)));
  }
  auto a = whole.result();
  auto b = chunked.result();
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_NEAR(a.mean, b.mean, 1e-9);
  EXPECT_NEAR(a.std, b.std, 1e-9);
  // std of 0, 0.25, ..., 249.75: 0.25 * sqrt((1000^2 - 1) / 12)
  EXPECT_NEAR(a.std, 0.25 * std::sqrt((1e6 - 1) / 12), 1e-6);
}

TEST(Stats, NoFiniteValuesGivesNaN) {
  safetensors::stats_accumulator acc;
  std::vector<double> v{std::nan("")};
  acc.add(v);
  auto s = acc.result();
  EXPECT_TRUE(std::isnan(s.min));
  EXPECT_TRUE(std::isnan(s.mean));
  EXPECT_TRUE(std::isnan(s.std));
  safetensors::stats_accumulator empty;
  EXPECT_EQ(empty.result().count, 0U);
  EXPECT_TRUE(std::isnan(empty.result().max));
}

}  // namespace
