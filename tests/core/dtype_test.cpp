// SPDX-License-Identifier: Apache-2.0
// dtype names, widths and overflow-checked sizes.
#include <gtest/gtest.h>

#include "safetensors/dtype.h"

namespace {

using safetensors::dtype;

TEST(Dtype, NamesRoundTripAndAreCaseSensitive) {
  ASSERT_EQ(safetensors::all_dtypes().size(), 22U);
  for (dtype t : safetensors::all_dtypes()) EXPECT_EQ(safetensors::parse_dtype(safetensors::dtype_name(t)), t);
  EXPECT_FALSE(safetensors::parse_dtype("bf16"));
  EXPECT_FALSE(safetensors::parse_dtype("F128"));
  EXPECT_FALSE(safetensors::parse_dtype(""));
}

TEST(Dtype, EnumOrderIsTheReferenceOrder) {
  const char* order[] = {"BOOL",    "F4",          "F6_E2M3",     "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3",
                         "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16",     "U16", "F16", "BF16",    "I32",
                         "U32",     "F32",         "C64",         "F64",     "I64", "U64"};
  for (std::size_t i = 0; i < 22; ++i) EXPECT_EQ(safetensors::dtype_name(safetensors::all_dtypes()[i]), order[i]);
}

TEST(Dtype, BitsAndSubByteRules) {
  EXPECT_EQ(safetensors::dtype_bits(dtype::F4), 4U);
  EXPECT_EQ(safetensors::dtype_bits(dtype::F6_E2M3), 6U);
  EXPECT_EQ(safetensors::dtype_bits(dtype::C64), 64U);
  EXPECT_EQ(safetensors::dtype_bits(dtype::BOOL), 8U);
  EXPECT_EQ(safetensors::byte_size(dtype::F4, std::uint64_t{2}).bytes, 1U);
  EXPECT_EQ(safetensors::byte_size(dtype::F4, std::uint64_t{3}).problem, safetensors::size_problem::not_whole_bytes);
  EXPECT_EQ(safetensors::byte_size(dtype::F6_E3M2, std::uint64_t{4}).bytes, 3U);
  EXPECT_EQ(safetensors::byte_size(dtype::F6_E3M2, std::uint64_t{2}).problem,
            safetensors::size_problem::not_whole_bytes);
  EXPECT_TRUE(safetensors::dtype_is_float(dtype::F8_E8M0));
  EXPECT_FALSE(safetensors::dtype_is_float(dtype::U32));
}

TEST(Dtype, ElementCountFoldsLeftToRightLikeTheReference) {
  const std::uint64_t huge = UINT64_MAX;
  const std::uint64_t zero_first[] = {0, huge, 2};
  const std::uint64_t zero_last[] = {huge, 2, 0};
  const std::uint64_t scalar[] = {1};
  EXPECT_EQ(safetensors::element_count(zero_first), 0U);
  EXPECT_FALSE(safetensors::element_count(zero_last).has_value());
  EXPECT_EQ(safetensors::element_count(std::span<const std::uint64_t>{}), 1U);
  EXPECT_EQ(safetensors::element_count(scalar), 1U);
  const std::uint64_t bits_overflow[] = {1ULL << 61};
  EXPECT_EQ(safetensors::byte_size(dtype::F64, bits_overflow).problem, safetensors::size_problem::overflow);
}

}  // namespace
