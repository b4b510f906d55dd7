// SPDX-License-Identifier: Apache-2.0
// The fast header walks (the schema scan, then the On-Demand walk) take the plain headers
// writers produce, so the fast path is really the common path, and decline everything the
// DOM walk must judge; either way the shipped parse gives exactly the DOM walk's answer.
// fuzz_header_walks checks the same agreement on arbitrary input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <simdjson.h>

#include "header/header_builder.h"
#include "header/header_walks.h"
#include "header/ondemand_walk.h"
#include "header/plain_scan.h"
#include "safetensors/header.h"
#include "support/byte_views.h"
#include "support/status_matchers.h"

namespace {

using safetensors::detail::header_walk;
using st_test::bytes_of;

/// Whether the On-Demand walk takes `json`, followed by 64 bytes of `pad`.
bool walk_takes(const std::string& json, char pad = ' ') {
  const std::string padded = json + std::string(simdjson::SIMDJSON_PADDING, pad);
  simdjson::ondemand::parser parser;
  safetensors::detail::header_builder out;
  return safetensors::detail::walk_plain_header(parser, padded.data(), json.size(), {}, out);
}

/// Whether the schema scan takes `json`, followed by 64 bytes of `pad`; `out` gets what it read.
bool scan_takes(const std::string& json, char pad = ' ', const safetensors::parse_options& options = {},
                safetensors::detail::header_builder* out = nullptr) {
  const std::string padded = json + std::string(safetensors::detail::json_padding, pad);
  safetensors::detail::header_builder local;
  return safetensors::detail::scan_plain_header(padded.data(), json.size(), options, out ? *out : local);
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
    ASSERT_ERROR(h, safetensors::error_code::limit_exceeded);
  }
}

TEST(HeaderPlainScan, TakesPlainHeadersSpelledSimply) {
  const std::vector<std::string> plain = {
      R"({})",
      R"({"__metadata__":null})",
      R"({"__metadata__":{},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})",
      R"({"__metadata__":{"format":"pt","k":"v w"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})",
      R"({"b":{"data_offsets":[4,6],"shape":[],"dtype":"BF16"},"a":{"shape":[4],"dtype":"U8","data_offsets":[0,4]}})",
      "{\"na\xc3\xafve \xe2\x82\xac\":{\"dtype\":\"F8_E4M3\",\"shape\":[1,1,0],\"data_offsets\":[0,0]}}",
      "{ \"a\" : { \"dtype\" : \"I64\" , \"shape\" : [ 1 ] , \"data_offsets\" : [ 0 , 8 ] } } \n",
      "{\n\t\"a\":\r\n{\"dtype\":\"I64\",\"shape\":[\n],\"data_offsets\":[0,8]}}",
      R"({"":{"dtype":"U8","shape":[24],"data_offsets":[0,24]}})",
      R"({"a.weight.long.enough.for.three.words":{"dtype":"U8","shape":[24],"data_offsets":[0,24]}})",
  };
  for (const std::string& json : plain) {
    EXPECT_TRUE(scan_takes(json)) << json;
    EXPECT_TRUE(scan_takes(json, '"')) << json;  // padding that looks like JSON changes nothing
    expect_same_as_dom(json, 24);
  }
}

TEST(HeaderPlainScan, ReadsNumbersOfEveryLengthExactly) {
  // 1 to 19 digits, across the eight-digit chunks the scan reads at a time.
  std::uint64_t value = 0;
  for (int digits = 1; digits <= 19; ++digits) {
    value = value * 10 + static_cast<std::uint64_t>(digits % 9 + 1);
    for (std::uint64_t v : {value, value / 10 * 10}) {
      const std::string json = R"({"a":{"dtype":"U8","shape":[)" + std::to_string(v) + R"(,0],"data_offsets":[)" +
                               std::to_string(v) + "," + std::to_string(v) + "]}}";
      safetensors::detail::header_builder out;
      ASSERT_TRUE(scan_takes(json, '7', {}, &out)) << json;
      ASSERT_EQ(out.dims.size(), 2U);
      EXPECT_EQ(out.dims[0], v) << json;
      EXPECT_EQ(out.tensors.at(0).begin, v) << json;
      EXPECT_EQ(out.tensors.at(0).end, v) << json;
    }
  }
  const std::string most = R"({"a":{"dtype":"U8","shape":[9999999999999999999,0],"data_offsets":[0,0]}})";
  safetensors::detail::header_builder out;
  ASSERT_TRUE(scan_takes(most, ' ', {}, &out));
  EXPECT_EQ(out.dims.at(0), 9999999999999999999ULL);
}

TEST(HeaderPlainScan, DeclinesWhatItDoesNotRecognise) {
  const std::string entry = R"("dtype":"U8","shape":[1],"data_offsets":[0,1])";
  const std::vector<std::string> declined = {
      R"({"__metadata__":{"k":"v\n"},"a":{)" + entry + "}}",  // an escape in metadata: the others read it
      R"({"a\u00e9":{)" + entry + "}}",                       // an escaped name
      R"({"a":{"dtype":"U8","shape":[10000000000000000000],"data_offsets":[0,1]}})",  // 20 digits
      R"({"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}})",                    // a leading zero
      R"({"a":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1 1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1,],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[,1],"data_offsets":[0,1]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0 1]}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"__metadata__":nullx})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"__metadata__":{"k":null}})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"__metadata__":{"k" "v"}})",
      " {\"a\":{" + entry + "}}",                                                         // leading whitespace
      "{\"a\xff\":{" + entry + "}}",                                                      // invalid UTF-8
      "{\"a\xc3\":{" + entry + "}}",                                                      // a cut sequence
      "{\"a\x1f\":{" + entry + "}}",                                                      // a control byte
      "{\"a\":{" + entry + "}}\f",                                                        // not JSON whitespace
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})" + std::string(1, '\0'),  // NUL after the JSON
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1)",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,)",
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets")",
      R"({"a":{"dtype":"U8","shape":[1],"data_off)",
      R"({"a":{"dtype":"U)",
      R"({"a)",
  };
  for (const std::string& json : declined) {
    EXPECT_FALSE(scan_takes(json)) << json;
    expect_same_as_dom(json, 1);
  }
  // What the padding holds never completes a cut header: no string, number or object ends there.
  for (const std::string& cut :
       {std::string(R"({"a":{)" + entry + "}"), std::string(R"({"a":{"dtype":"U8)"),
        std::string(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1)"),
        std::string(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1])"),
        std::string(R"({"a":{"dtype":"U8","shape":[1],"data_offsets)"), std::string(R"({"__metadata__":nu)")}) {
    for (char pad : {'}', ',', '"', ']', '1', ' '}) EXPECT_FALSE(scan_takes(cut, pad)) << cut << " + " << pad;
  }
}

TEST(HeaderPlainScan, LimitsAreLeftToTheDomWalk) {
  const std::string json =
      R"({"__metadata__":{"key":"value"},"abc":{"dtype":"U8","shape":[1,1],"data_offsets":[0,1]}})";
  for (auto set : {+[](safetensors::limits& l) { l.max_tensors = 0; }, +[](safetensors::limits& l) { l.max_rank = 1; },
                   +[](safetensors::limits& l) { l.max_name_bytes = 2; },
                   +[](safetensors::limits& l) { l.max_metadata_bytes = 7; }}) {
    safetensors::limits caps;
    set(caps);
    const safetensors::parse_options o{safetensors::validation_policy::reference, caps};
    EXPECT_FALSE(scan_takes(json, ' ', o));
    auto h = safetensors::parse_header(bytes_of(json), 8 + json.size() + 1, o);
    ASSERT_ERROR(h, safetensors::error_code::limit_exceeded);
  }
  // At each limit exactly, the scan reads the header.
  safetensors::limits exact;
  exact.max_tensors = 1;
  exact.max_rank = 2;
  exact.max_name_bytes = 3;
  exact.max_metadata_bytes = 8;
  EXPECT_TRUE(scan_takes(json, ' ', {safetensors::validation_policy::reference, exact}));
}

}  // namespace
