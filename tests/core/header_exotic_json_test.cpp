// SPDX-License-Identifier: Apache-2.0
// JSON the reference never reads but serde_json still parses: numbers and nesting inside
// an ignored field of a tensor entry get serde_json's verdict (default features), not
// simdjson's. (`validate --json` escaping U+2028 and U+2029: cli_core_test.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "json/serde_number.h"
#include "safetensors/header.h"
#include "safetensors/json_text.h"
#include "support/byte_views.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
using safetensors::detail::classify_serde_number;
using safetensors::detail::serde_number;
using st_test::bytes_of;

/// The verdict on a one-byte U8 tensor `a` whose entry also has the field "x": `ignored`.
std::string verdict_with_ignored(const std::string& ignored, const std::string& offsets = "[0,1]") {
  const std::string json = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":)" + offsets + R"(,"x":)" + ignored + "}}";
  auto h = safetensors::parse_header(bytes_of(json), 8 + json.size() + 1);
  return h ? "ok" : std::string(safetensors::error_code_name(h.err().code));
}

std::string nested_arrays(std::size_t count, const std::string& inner) {
  return std::string(count, '[') + inner + std::string(count, ']');
}

/// "1" followed by `zeros` zeros (built in place: `"1" + std::string(n, '0')` trips a GCC 12
/// -Wrestrict false positive, fatal under SAFETENSORS_WERROR).
std::string one_then_zeros(std::size_t zeros) {
  std::string s(zeros + 1, '0');
  s[0] = '1';
  return s;
}

TEST(SerdeNumber, IntegersBeyond64BitsAreFloatsUpToTheFloatRange) {
  EXPECT_EQ(classify_serde_number("18446744073709551615"), serde_number::unsigned_integer);
  EXPECT_EQ(classify_serde_number("18446744073709551616"), serde_number::floating);
  EXPECT_EQ(classify_serde_number("-9223372036854775808"), serde_number::negative_integer);
  EXPECT_EQ(classify_serde_number("-9223372036854775809"), serde_number::floating);
  EXPECT_EQ(classify_serde_number("-0"), serde_number::floating);
  EXPECT_EQ(classify_serde_number(one_then_zeros(308)), serde_number::floating);        // 1e308, 309 digits
  EXPECT_EQ(classify_serde_number(one_then_zeros(309)), serde_number::out_of_range);    // 310 digits
  EXPECT_EQ(classify_serde_number(std::string(309, '9')), serde_number::out_of_range);  // ~1e309
}

TEST(SerdeNumber, FloatsFollowSerdeJsonsPowerOfTenProduct) {
  EXPECT_EQ(classify_serde_number("1.7976931348623158e308"), serde_number::out_of_range);  // f64::MAX exactly
  EXPECT_EQ(classify_serde_number("1e308"), serde_number::floating);
  EXPECT_EQ(classify_serde_number("1e309"), serde_number::out_of_range);
  EXPECT_EQ(classify_serde_number("1e-400"), serde_number::floating);  // underflows to zero, accepted
  EXPECT_EQ(classify_serde_number("0e99999"), serde_number::floating);
  EXPECT_EQ(classify_serde_number("1e2147483648"), serde_number::out_of_range);  // exponent past i32
  EXPECT_EQ(classify_serde_number("0e2147483648"), serde_number::floating);
  EXPECT_EQ(classify_serde_number("-1e-2147483648"), serde_number::floating);
  EXPECT_EQ(classify_serde_number("0." + std::string(400, '0') + "1"), serde_number::floating);
}

TEST(SerdeNumber, RejectsWhatIsNotANumberToken) {
  for (const char* bad : {"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1.5x", "--1"}) {
    EXPECT_EQ(classify_serde_number(bad), serde_number::not_a_number) << bad;
  }
}

TEST(HeaderExoticJson, BigIntegersInAnIgnoredFieldAreAcceptedAsSerdeJsonDoes) {
  EXPECT_EQ(verdict_with_ignored("18446744073709551616"), "ok");
  EXPECT_EQ(verdict_with_ignored("-9223372036854775809"), "ok");
  EXPECT_EQ(verdict_with_ignored("[1," + std::string(309, '1') + ",{\"k\":-" + std::string(200, '7') + "}]"), "ok");
  EXPECT_EQ(verdict_with_ignored(one_then_zeros(309)), "InvalidHeaderDeserialization");
}

TEST(HeaderExoticJson, FloatsOutOfSerdeJsonsRangeAreRejected) {
  EXPECT_EQ(verdict_with_ignored("1.7976931348623158e308"), "InvalidHeaderDeserialization");
  EXPECT_EQ(verdict_with_ignored("{\"k\":[0.5,-1.7976931348623158e308]}"), "InvalidHeaderDeserialization");
  EXPECT_EQ(verdict_with_ignored("1e308"), "ok");
  EXPECT_EQ(verdict_with_ignored("1e-400"), "ok");
}

TEST(HeaderExoticJson, LaterStagesStillRunAfterABigInteger) {
  // A big integer sends the text through the re-spelled copy; every later check still runs.
  EXPECT_EQ(verdict_with_ignored("18446744073709551616", "[1,2]"), "InvalidOffset");
  EXPECT_EQ(verdict_with_ignored("{\"k\":18446744073709551616,\"k\":1}"), "DuplicateKey");
  const std::string big_shape = R"({"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}})";
  auto h = safetensors::parse_header(bytes_of(big_shape), 8 + big_shape.size() + 1);
  ASSERT_ERROR(h, error_code::invalid_header_deserialization);
  const std::string negative_zero =
      R"({"a":{"dtype":"U8","shape":[-0],"data_offsets":[0,1],"x":18446744073709551616}})";
  auto z = safetensors::parse_header(bytes_of(negative_zero), 8 + negative_zero.size() + 1);
  ASSERT_ERROR(z, error_code::invalid_header_deserialization);
}

TEST(HeaderExoticJson, StageFiveTieBreakDoesNotDependOnABigInteger) {
  // A repeated key (ours) before a number out of serde_json's range: the walk meets the key
  // first, with or without a big integer sending the text through the re-spelled copy
  // (found by fuzz_header_numbers).
  EXPECT_EQ(verdict_with_ignored(R"(1,"x":[1.7976931348623158e308])"), "DuplicateKey");
  EXPECT_EQ(verdict_with_ignored(R"(1,"x":[18446744073709551616,1.7976931348623158e308])"), "DuplicateKey");
  // simdjson rejects 1e309 itself: syntax-level errors come before the walk on both paths.
  EXPECT_EQ(verdict_with_ignored(R"(1,"x":[1e309])"), "InvalidHeaderDeserialization");
  EXPECT_EQ(verdict_with_ignored(R"(1,"x":[18446744073709551616,1e309])"), "InvalidHeaderDeserialization");
}

TEST(HeaderExoticJson, OutOfRangeNumbersSayWhere) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1e309}})";
  auto h = safetensors::parse_header(bytes_of(json), 8 + json.size() + 1);
  ASSERT_ERROR(h, error_code::invalid_header_deserialization);
  EXPECT_EQ(h.err().offset, 8 + json.find("1e309"));
  EXPECT_NE(h.err().message.find("number out of range"), std::string::npos) << h.err().message;
}

TEST(HeaderExoticJson, NestingCountsEveryContainerAsSerdeJsonDoes) {
  // Levels: top object 1, tensor entry 2, then the ignored field's arrays.
  EXPECT_EQ(verdict_with_ignored(nested_arrays(125, "1")), "ok");  // 127 levels around a scalar
  EXPECT_EQ(verdict_with_ignored(nested_arrays(125, "")), "ok");   // innermost empty, 127 levels
  EXPECT_EQ(verdict_with_ignored(nested_arrays(126, "")), "InvalidHeaderDeserialization");  // 128, empty
  EXPECT_EQ(verdict_with_ignored(nested_arrays(126, "1")), "InvalidHeaderDeserialization");
  EXPECT_EQ(verdict_with_ignored(nested_arrays(125, "{}")), "InvalidHeaderDeserialization");
  EXPECT_EQ(verdict_with_ignored(nested_arrays(124, "{}")), "ok");
}

TEST(JsonQuote, EscapesLineSeparatorsButTheWriterKeepsSerdeBytes) {
  EXPECT_EQ(safetensors::json_quote("a\u2028b\u2029c\u2027"), "\"a\\u2028b\\u2029c\u2027\"");
  EXPECT_EQ(safetensors::json_quote("\xE2\x80"), "\"\xE2\x80\"");  // a cut sequence is copied as is
  const std::string json = "{\"a\u2028\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
  auto h = safetensors::parse_header(bytes_of(json), 8 + json.size() + 1);
  ASSERT_TRUE(h) << h.err().message;
  EXPECT_EQ(safetensors::header_to_json(*h), json);
}

}  // namespace
