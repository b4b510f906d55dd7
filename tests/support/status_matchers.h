// SPDX-License-Identifier: Apache-2.0
// GoogleTest helpers for result<T>/status: a failed check prints the error itself
// ("IoError: x.safetensors: cannot open ...") instead of "Value of: r.ok()  Actual: false".
#pragma once

#include <gtest/gtest.h>

#include "safetensors/error.h"

namespace st_test {

template <class T>
::testing::AssertionResult is_ok(const safetensors::result<T>& r) {
  if (r) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << safetensors::error_code_name(r.err().code) << ": " << r.err().to_string();
}

template <class T>
::testing::AssertionResult fails_with(const safetensors::result<T>& r, safetensors::error_code code) {
  if (r) return ::testing::AssertionFailure() << "succeeded, expected " << safetensors::error_code_name(code);
  if (r.err().code == code) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << safetensors::error_code_name(code) << ", got "
                                       << safetensors::error_code_name(r.err().code) << ": " << r.err().to_string();
}

}  // namespace st_test

/// ASSERT_OK(file::open(p)); EXPECT_OK(write_file(...)); EXPECT_ERROR(r, error_code::io).
#define ASSERT_OK(expr) ASSERT_TRUE(::st_test::is_ok(expr))
#define EXPECT_OK(expr) EXPECT_TRUE(::st_test::is_ok(expr))
#define ASSERT_ERROR(expr, code) ASSERT_TRUE(::st_test::fails_with((expr), (code)))
#define EXPECT_ERROR(expr, code) EXPECT_TRUE(::st_test::fails_with((expr), (code)))
