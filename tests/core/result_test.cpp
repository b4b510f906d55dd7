// SPDX-License-Identifier: Apache-2.0
// result<T> and error: the checked accessors, value() on an error, and with_path.
#include <gtest/gtest.h>

#include <string>

#include "safetensors/error.h"

namespace {

namespace st = safetensors;

st::result<int> parsed(bool ok) {
  if (ok) return 7;
  return st::make_error(st::error_code::invalid_argument, "not a number", 12, "w");
}

TEST(Result, ValueOrGivesTheValueOrTheFallback) {
  EXPECT_EQ(parsed(true).value_or(-1), 7);
  EXPECT_EQ(parsed(false).value_or(-1), -1);
  const st::result<std::string> text = std::string("kept");
  EXPECT_EQ(text.value_or("fallback"), "kept");
}

TEST(Result, ValueOfAnErrorStopsWithTheErrorsTextInsteadOfThrowing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)parsed(false).value(),
               "value\\(\\) of a failed result: not a number \\(at byte 12, tensor 'w'\\)");
}

TEST(Result, ErrOfASuccessStopsWithAMessageInsteadOfThrowing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)parsed(true).err(), "err\\(\\) of a successful result");
  const st::status fine;
  EXPECT_DEATH((void)fine.err(), "err\\(\\) of a successful result");
}

TEST(Error, WithPathNamesTheFileOnlyWhenNoneIsNamedYet) {
  st::error inner = st::make_error(st::error_code::io, "short read");
  inner.path = "shard-1.safetensors";
  EXPECT_EQ(std::move(inner).with_path("model").path, "shard-1.safetensors");
  EXPECT_EQ(st::make_error(st::error_code::io, "short read").with_path("model").path, "model");
}

}  // namespace
