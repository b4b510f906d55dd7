// SPDX-License-Identifier: Apache-2.0
// A header_parser of one's own gives the free functions' answers, call after call, across
// sizes and after errors (its buffers are reused, never stale), and refills the headers
// handed back to it instead of allocating.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include <fmt/format.h>

#include "safetensors/header.h"
#include "safetensors/json_text.h"
#include "support/alloc_counter.h"
#include "support/byte_views.h"
#include "support/status_matchers.h"

namespace {

using st_test::bytes_of;

/// `n` F32 tensors of 2 elements back to back: 8 bytes each. `name_width` pads the layer
/// numbers with zeros, which puts the names in order.
std::string tiled_header(std::size_t n, int name_width = 0) {
  std::string json = "{";
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) json += ',';
    json += fmt::format(R"("layer.{:0{}}.weight":{{"dtype":"F32","shape":[2],"data_offsets":[{},{}]}})", i, name_width,
                        8 * i, 8 * i + 8);
  }
  return json + "}";
}

/// Parses tiled_header(n) with `parser`, checks it against the free function's header and
/// returns it (nullopt when a parse failed).
std::optional<safetensors::header> parse_as_free_does(safetensors::header_parser& parser, std::size_t n) {
  const std::string json = tiled_header(n);
  const std::uint64_t file_size = 8 + json.size() + 8 * n;
  auto mine = parser.parse(bytes_of(json), file_size);
  auto free = safetensors::parse_header(bytes_of(json), file_size);
  EXPECT_TRUE(mine) << mine.err().message;
  EXPECT_TRUE(free);
  if (!mine || !free) return std::nullopt;
  EXPECT_EQ(mine->tensors().size(), n);
  EXPECT_EQ(safetensors::header_to_json(*mine), safetensors::header_to_json(*free));
  if (n > 0) {
    const auto* last = mine->find(fmt::format("layer.{}.weight", n - 1));
    EXPECT_NE(last, nullptr);
    EXPECT_EQ(last != nullptr ? last->end : 0, 8 * n);
  }
  return std::move(*mine);
}

TEST(HeaderParser, GivesTheFreeFunctionsAnswersAcrossSizesAndErrors) {
  safetensors::header_parser parser;
  for (std::size_t n : {3UL, 20'000UL, 1UL, 5'000UL}) {
    ASSERT_TRUE(parse_as_free_does(parser, n));
    const std::string json = tiled_header(n);
    const std::uint64_t file_size = 8 + json.size() + 8 * n;
    auto bad = parser.parse(bytes_of(json), file_size + 1);  // one trailing byte
    ASSERT_ERROR(bad, safetensors::error_code::metadata_incomplete_buffer);
    auto broken = parser.parse(bytes_of(json.substr(0, json.size() / 2)), file_size);
    ASSERT_ERROR(broken, safetensors::error_code::invalid_header_deserialization);
  }
}

TEST(HeaderParser, ParsesWholeFilesAndMoves) {
  const std::string json = tiled_header(2);
  std::string file(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) file[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  file += json + std::string(16, 'x');
  safetensors::header_parser first;
  safetensors::header_parser parser = std::move(first);
  auto h = parser.parse_file_bytes(bytes_of(file));
  ASSERT_TRUE(h) << h.err().message;
  EXPECT_EQ(h->data_size(), 16U);
  auto short_file = parser.parse_file_bytes(bytes_of(file.substr(0, 4)));
  ASSERT_ERROR(short_file, safetensors::error_code::header_too_small);
}

TEST(HeaderParser, RefillsRecycledHeadersWithTheSameAnswers) {
  safetensors::header_parser parser;
  for (std::size_t n : {20'000UL, 3UL, 20'000UL, 0UL, 7UL}) {  // smaller and larger than the spare
    auto h = parse_as_free_does(parser, n);
    ASSERT_TRUE(h);
    parser.recycle(std::move(*h));
  }
}

TEST(HeaderParser, RecyclingAMovedFromHeaderIsHarmless) {
  safetensors::header_parser parser;
  auto h = parse_as_free_does(parser, 500);
  ASSERT_TRUE(h);
  safetensors::header kept = std::move(*h);
  parser.recycle(std::move(*h));  // its arrays went to `kept`: nothing to refill
  ASSERT_TRUE(parse_as_free_does(parser, 400));
  EXPECT_EQ(kept.tensors().size(), 500U);
  EXPECT_NE(kept.find("layer.499.weight"), nullptr);
}

TEST(HeaderParser, RecycledHeaderSavesTheResultsAllocations) {
  if (!st_test::alloc_probe::available()) GTEST_SKIP() << "allocation counting is off under sanitizers";
  const std::size_t n = 20'000;
  const std::string json = tiled_header(n, 5);  // names in order: no sort, whose work array would count
  const std::uint64_t file_size = 8 + json.size() + 8 * n;
  safetensors::header_parser parser;
  auto first = parser.parse(bytes_of(json), file_size);  // the parser's own buffers grow here
  ASSERT_TRUE(first);
  std::size_t fresh_peak = 0;
  {
    st_test::alloc_probe probe;
    auto again = parser.parse(bytes_of(json), file_size);
    ASSERT_TRUE(again);
    fresh_peak = probe.peak();
  }
  parser.recycle(std::move(*first));
  st_test::alloc_probe probe;
  auto refilled = parser.parse(bytes_of(json), file_size);
  ASSERT_TRUE(refilled);
  EXPECT_GE(fresh_peak, n * sizeof(safetensors::tensor_info));  // the tensor array at least
  EXPECT_LE(probe.peak(), 4096U) << "the recycled header's arrays should be refilled";
}

}  // namespace
