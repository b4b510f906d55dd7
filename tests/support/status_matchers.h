// SPDX-License-Identifier: Apache-2.0
// GoogleTest helpers for result<T>/status: a failed check prints the error itself
// ("IoError: x.safetensors: cannot open ...") instead of "Value of: r.ok()  Actual: false".
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

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

/// fails_with, and the error's message contains `text`.
template <class T>
::testing::AssertionResult fails_saying(const safetensors::result<T>& r, safetensors::error_code code,
                                        std::string_view text) {
  auto failed = fails_with(r, code);
  if (!failed) return failed;
  if (r.err().message.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected a message with \"" << text << "\", got: " << r.err().to_string();
}

}  // namespace st_test

/// ASSERT_OK(file::open(p)); EXPECT_OK(write_file(...)); EXPECT_ERROR(r, error_code::io).
#define ASSERT_OK(expr) ASSERT_TRUE(::st_test::is_ok(expr))
#define EXPECT_OK(expr) EXPECT_TRUE(::st_test::is_ok(expr))
#define ASSERT_ERROR(expr, code) ASSERT_TRUE(::st_test::fails_with((expr), (code)))
#define EXPECT_ERROR(expr, code) EXPECT_TRUE(::st_test::fails_with((expr), (code)))
/// EXPECT_ERROR_SAYING(r, error_code::io, "No such file"): the code, and the message contains the text.
#define EXPECT_ERROR_SAYING(expr, code, text) EXPECT_TRUE(::st_test::fails_saying((expr), (code), (text)))
