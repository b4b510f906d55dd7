// SPDX-License-Identifier: Apache-2.0
// The On-Demand header walk takes the plain headers writers produce (so the fast path is
// really the common path) and declines everything the DOM walk must judge; either way the
// shipped parse gives exactly the DOM walk's answer. fuzz_header_walks checks the same
// agreement on arbitrary input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <simdjson.h>

#include "header/header_builder.h"
#include "header/header_walks.h"
#include "header/ondemand_walk.h"
#include "safetensors/header.h"

namespace {

using safetensors::detail::header_walk;

std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

/// Whether the On-Demand walk takes `json`, followed by 64 bytes of `pad`.
bool walk_takes(const std::string& json, char pad = ' ') {
  const std::string padded = json + std::string(simdjson::SIMDJSON_PADDING, pad);
  simdjson::ondemand::parser parser;
  safetensors::detail::header_builder out;
  return safetensors::detail::walk_plain_header(parser, padded.data(), json.size(), {}, out);
}

/// The shipped parse and the DOM walk alone give the same verdict and error.
void expect_same_as_dom(const std::string& json, std::uint64_t data_bytes) {
  const std::uint64_t file_size = 8 + json.size() + data_bytes;
  auto shipped = safetensors::parse_header(bytes_of(json), file_size);
  auto dom = safetensors::detail::parse_header_with(header_walk::dom_only, bytes_of(json), file_size, {}, false);
  ASSERT_EQ(shipped.ok(), dom.ok()) << json;
  if (!dom.ok()) {
    EXPECT_EQ(shipped.err().code, dom.err().code) << json;
    EXPECT_EQ(shipped.err().message, dom.err().message) << json;
    EXPECT_EQ(shipped.err().tensor, dom.err().tensor) << json;
    return;
  }
  ASSERT_EQ(shipped->tensors().size(), dom->tensors().size()) << json;
  EXPECT_EQ(shipped->metadata(), dom->metadata()) << json;
  for (std::size_t i = 0; i < dom->tensors().size(); ++i) {
    EXPECT_EQ(shipped->tensors()[i].name, dom->tensors()[i].name) << json;
    EXPECT_EQ(shipped->tensors()[i].type, dom->tensors()[i].type) << json;
    EXPECT_EQ(shipped->tensors()[i].end, dom->tensors()[i].end) << json;
    EXPECT_TRUE(std::ranges::equal(shipped->tensors()[i].shape, dom->tensors()[i].shape)) << json;
  }
}

TEST(HeaderOnDemandWalk, TakesPlainHeaders) {
  const std::vector<std::string> plain = {
      R"({})",
      R"({"__metadata__":null})",
      R"({"__metadata__":{"format":"pt","k\u00e9y":"v\n\"x\""},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})",
      R"({"b":{"data_offsets":[4,6],"shape":[],"dtype":"BF16"},"a":{"shape":[4],"dtype":"U8","data_offsets":[0,4]}})",
      R"({"na\u00efve \"q\"":{"dtype":"F8_E4M3","shape":[1,1,0],"data_offsets":[0,0]}})",
      " { \"a\" : { \"dtype\" : \"I64\" , \"shape\" : [ 1 ] , \"data_offsets\" : [ 0 , 8 ] } } \n",
  };
  for (const std::string& json : plain) {
    EXPECT_TRUE(walk_takes(json)) << json;
    expect_same_as_dom(json, 24);
  }
}

TEST(HeaderOnDemandWalk, DeclinesWhatTheDomWalkMustJudge) {
  const std::string entry = R"("dtype":"U8","shape":[1],"data_offsets":[0,1])";
  const std::vector<std::string> declined = {
      R"({"a":{)" + entry + R"(,"extra":[1,{"k":2.5}]}})",              // an unknown field (valid when lenient)
      R"({"a":{)" + entry + R"(,"dtype":"U8"}})",                       // a repeated field
      R"({"a":{"d\u0074ype":"U8","shape":[1],"data_offsets":[0,1]}})",  // an escaped field name
      R"({"a":{"dtype":"U8","shape":[-0],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})",
      R"({"a":{"dtype":"U9","shape":[1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1]}})",
      R"({"__metadata__":{"k":1},"a":{)" + entry + "}}",
      R"({"__metadata__":{"k":"x","k":"y"},"a":{)" + entry + "}}",
      R"({"__metadata__":null,"__metadata__":null,"a":{)" + entry + "}}",
      R"({"__metadata__":nul,"a":{)" + entry + "}}",
      R"({"a":{)" + entry + "}} x",
      R"({"a":{)" + entry + "}}}",
      R"({"a":{)" + entry + "},}",
      R"({"a":[)" + entry + "]}",
      R"([])",
      "{\"a\":{\"dtype\":\"U8\x01\",\"shape\":[1],\"data_offsets\":[0,1]}}",
  };
  for (const std::string& json : declined) {
    EXPECT_FALSE(walk_takes(json)) << json;
    expect_same_as_dom(json, 1);
  }
  // Unclosed: the first padding byte must not close the top-level object.
  const std::string unclosed = R"({"a":{)" + entry + "}";
  EXPECT_FALSE(walk_takes(unclosed, '}'));
  EXPECT_FALSE(walk_takes(unclosed, ','));
}

TEST(HeaderOnDemandWalk, LimitsAreLeftToTheDomWalk) {
  const std::string json = R"({"abc":{"dtype":"U8","shape":[1,1],"data_offsets":[0,1]}})";
  for (auto set : {+[](safetensors::limits& l) { l.max_tensors = 0; }, +[](safetensors::limits& l) { l.max_rank = 1; },
                   +[](safetensors::limits& l) { l.max_name_bytes = 2; }}) {
    safetensors::limits caps;
    set(caps);
    const safetensors::parse_options o{safetensors::validation_policy::reference, caps};
    const std::string padded = json + std::string(simdjson::SIMDJSON_PADDING, ' ');
    simdjson::ondemand::parser parser;
    safetensors::detail::header_builder out;
    EXPECT_FALSE(safetensors::detail::walk_plain_header(parser, padded.data(), json.size(), o, out));
    auto h = safetensors::parse_header(bytes_of(json), 8 + json.size() + 1, o);
    ASSERT_FALSE(h.ok());
    EXPECT_EQ(h.err().code, safetensors::error_code::limit_exceeded);
  }
}

}  // namespace
