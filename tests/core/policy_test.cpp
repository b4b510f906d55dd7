// SPDX-License-Identifier: Apache-2.0
// Policies: strict rejects unknown fields and applies caps; lenient accepts trailing
// bytes with a warning; reference does neither.
#include <gtest/gtest.h>

#include <cstring>

#include "safetensors/header.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
using safetensors::validation_policy;

std::vector<std::byte> file_of(const std::string& json, std::size_t data_bytes) {
  std::vector<std::byte> file(8 + json.size() + data_bytes);
  std::uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) file[static_cast<std::size_t>(i)] = static_cast<std::byte>((n >> (8 * i)) & 0xFF);
  std::memcpy(file.data() + 8, json.data(), json.size());
  return file;
}

safetensors::result<safetensors::header> parse(const std::vector<std::byte>& f, validation_policy p,
                                               std::optional<safetensors::limits> caps = std::nullopt) {
  safetensors::parse_options o;
  o.policy = p;
  o.caps = caps;
  return safetensors::parse_file_bytes(f, o);
}

TEST(Policy, UnknownFieldsAreIgnoredExceptInStrictMode) {
  auto f = file_of(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"extra":{"k":[1,2]}}})", 1);
  EXPECT_OK(parse(f, validation_policy::reference));
  EXPECT_OK(parse(f, validation_policy::lenient));
  auto strict = parse(f, validation_policy::strict);
  ASSERT_ERROR(strict, error_code::unknown_field);
  EXPECT_EQ(strict.err().tensor.value_or(""), "a");
}

TEST(Policy, TrailingBytesAreAWarningOnlyInLenientMode) {
  auto f = file_of(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 5);
  auto ref = parse(f, validation_policy::reference);
  ASSERT_ERROR(ref, error_code::metadata_incomplete_buffer);
  auto lenient = parse(f, validation_policy::lenient);
  ASSERT_OK(lenient);
  ASSERT_EQ(lenient->warnings().size(), 1U);
  EXPECT_EQ(lenient->warnings()[0].message, "4 trailing bytes after the last tensor");
  EXPECT_EQ(lenient->warnings()[0].offset.value_or(0), f.size() - 4);
  // Missing bytes stay an error.
  auto short_file = file_of(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 1);
  EXPECT_FALSE(parse(short_file, validation_policy::lenient).ok());
}

TEST(Policy, StrictCapsEachLimitWithItsOwnMessage) {
  safetensors::limits caps = safetensors::limits::strict_defaults();
  caps.max_tensors = 1;
  auto two = file_of(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                     R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                     2);
  auto r = parse(two, validation_policy::strict, caps);
  ASSERT_ERROR(r, error_code::limit_exceeded);
  EXPECT_NE(r.err().message.find("more than 1 tensors"), std::string::npos);

  auto deep = file_of(R"({"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}})", 1);
  auto rank = parse(deep, validation_policy::strict);
  ASSERT_FALSE(rank.ok());
  EXPECT_NE(rank.err().message.find("rank 9 exceeds the limit of 8"), std::string::npos);
  EXPECT_OK(parse(deep, validation_policy::reference));

  auto long_name =
      file_of(R"({")" + std::string(1025, 'n') + R"(":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  auto name = parse(long_name, validation_policy::strict);
  ASSERT_ERROR(name, error_code::limit_exceeded);

  caps = safetensors::limits::strict_defaults();
  caps.max_metadata_bytes = 4;
  auto meta = file_of(R"({"__metadata__":{"key":"value"}})", 0);
  auto m = parse(meta, validation_policy::strict, caps);
  ASSERT_ERROR(m, error_code::limit_exceeded);

  caps.max_header_bytes = 16;
  auto header = parse(meta, validation_policy::strict, caps);
  ASSERT_ERROR(header, error_code::header_too_large);
}

TEST(Policy, NamesRoundTrip) {
  for (auto p : {validation_policy::reference, validation_policy::strict, validation_policy::lenient}) {
    EXPECT_EQ(safetensors::parse_policy(safetensors::policy_name(p)), p);
  }
  EXPECT_FALSE(safetensors::parse_policy("Strict").has_value());
}

TEST(Policy, DuplicateKeysAnywhereAreDuplicateKey) {
  const char* cases[] = {
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"\u0061":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"__metadata__":{"k":"1","k":"2"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":[{"q":1,"q":2}]}})",
  };
  for (const char* json : cases) {
    auto r = parse(file_of(json, 1), validation_policy::reference);
    ASSERT_ERROR(r, error_code::duplicate_key) << json;
  }
}

}  // namespace
