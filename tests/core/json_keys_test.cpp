// SPDX-License-Identifier: Apache-2.0
// find_duplicate_json_key: serde_json's refusal of repeated keys, for JSON files the library
// does not parse itself (an MLX config.json).
#include <gtest/gtest.h>

#include <simdjson.h>

#include <optional>
#include <string>

#include "safetensors/json_keys.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
using safetensors::find_duplicate_json_key;

std::optional<std::string> duplicate(std::string_view json) {
  auto r = find_duplicate_json_key(json);
  EXPECT_OK(r) << json;
  return r ? *r : std::optional<std::string>{"<error>"};
}

TEST(FindDuplicateJsonKey, NoneInDistinctKeysAtAnyDepth) {
  EXPECT_EQ(duplicate(R"({"a": 1, "b": {"a": 2, "c": [{"a": 3}, {"a": 4}]}})"), std::nullopt);
  EXPECT_EQ(duplicate("[1, 2, 3]"), std::nullopt);
  EXPECT_EQ(duplicate("17"), std::nullopt);
}

TEST(FindDuplicateJsonKey, FindsARepeatAtTheTopInsideObjectsAndInsideArrays) {
  EXPECT_EQ(duplicate(R"({"a": 1, "a": 2})"), "a");
  EXPECT_EQ(duplicate(R"({"q": {"bits": 4, "group_size": 64, "bits": 8}})"), "bits");
  EXPECT_EQ(duplicate(R"({"layers": [{"x": 1}, {"y": 1, "y": 2}]})"), "y");
}

TEST(FindDuplicateJsonKey, ComparesKeysAfterUnescaping) {
  EXPECT_EQ(duplicate(R"({"bits": 4, "b\u0069ts": 8})"), "bits");
}

TEST(FindDuplicateJsonKey, FindsARepeatInAnObjectOfManyKeys) {
  std::string json = "{";
  for (int i = 0; i < 40; ++i) json += "\"k" + std::to_string(i) + "\": 0, ";
  json += "\"k17\": 1}";
  EXPECT_EQ(duplicate(json), "k17");
}

TEST(FindDuplicateJsonKey, TextThatIsNotJsonIsAnError) {
  EXPECT_ERROR(find_duplicate_json_key(R"({"a": )"), error_code::invalid_header_deserialization);
  EXPECT_ERROR(find_duplicate_json_key(""), error_code::invalid_header_deserialization);
}

// The SIMD kernels find an unclosed string or an unescaped control character in a first pass; the
// fallback kernel (WebAssembly's only one) would word them otherwise: the words are the same on both.
TEST(FindDuplicateJsonKey, JsonErrorsHaveTheSameWordsOnEveryKernel) {
  const std::string texts[] = {R"({"a":{"b":"c,"d":1}})", R"({"k":"v\"},"a":1})", "{\"a\":\"x\x01\"}",
                               "{\"a\":\"x\\\x01\"}"};
  const std::string words[] = {"A string is opened, but never closed.", "A string is opened, but never closed.",
                               "Within strings, some characters must be escaped, we found unescaped characters",
                               "Within strings, some characters must be escaped, we found unescaped characters"};
  auto& active = simdjson::get_active_implementation();
  const simdjson::implementation* native = active;
  for (const char* kernel : {"fallback", "haswell", "westmere", "icelake"}) {
    const auto* implementation = simdjson::get_available_implementations()[kernel];
    if (implementation == nullptr || !implementation->supported_by_runtime_system()) continue;
    active = implementation;
    for (std::size_t i = 0; i < std::size(texts); ++i) {
      auto r = find_duplicate_json_key(texts[i]);
      ASSERT_FALSE(r) << kernel << ": " << texts[i];
      EXPECT_EQ(r.err().message, words[i]) << kernel << ": " << texts[i];
    }
  }
  active = native;
}

}  // namespace
