// SPDX-License-Identifier: Apache-2.0
// Worst-case inputs for the header parser and the reader: a 100,000,000-byte header, one
// million tensors, rank-64 and very long shapes, deeply nested JSON, lying length
// prefixes. Each asserts the documented peak-heap bound (SECURITY.md, "Memory"):
//   parse_file_bytes / from_buffer:  peak <= 32 * N + 64 KiB
//   file::open (pread):              peak <= 33 * N + 64 KiB
//   checkpoint index parse:          peak <= 32 * N + 64 KiB
//   slice spec parse:                peak <= 32 * N + 64 KiB
// where N is the header length, measured by counting operator new (not by timing).
// simdjson's DOM takes about 14.7 * N (tape, structural index, string buffer, padded
// copy); the parsed entries and shape arenas add up to 12 * N for shapes like "1,1,1".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

#include "safetensors/checkpoint_index.h"
#include "safetensors/file.h"
#include "safetensors/header.h"
#include "safetensors/slice.h"
#include "support/alloc_counter.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using namespace safetensors;

constexpr std::size_t slack = 64 * 1024;

std::size_t parse_bound(std::size_t n) { return 32 * n + slack; }

/// A file whose header is `json` padded with spaces to `pad_to` bytes, then `data_bytes` zeros.
std::vector<std::byte> make_file(const std::string& json, std::size_t data_bytes, std::size_t pad_to = 0) {
  const std::size_t n = std::max(json.size(), pad_to);
  std::vector<std::byte> out(8 + n + data_bytes, std::byte{0});
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::byte>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, json.data(), json.size());
  std::memset(out.data() + 8 + json.size(), ' ', n - json.size());
  return out;
}

#define REQUIRE_COUNTER() \
  if (!st_test::alloc_probe::available()) GTEST_SKIP() << "allocation counting is off under sanitizers"

/// Parses `bytes` under `options`, returning the verdict; checks the peak-heap bound.
std::string parse_within_bound(const std::vector<std::byte>& bytes, const parse_options& options = {}) {
  const std::size_t n = bytes.size() >= 8 ? std::min<std::size_t>(bytes.size() - 8, 100'000'000) : 0;
  st_test::alloc_probe probe;
  auto h = parse_file_bytes(bytes, options);
  const std::size_t peak = probe.peak();
  EXPECT_LE(peak, parse_bound(n)) << "N = " << n;
  std::printf("N = %zu bytes: peak heap %zu bytes (%.2f x N)\n", n, peak, n ? double(peak) / double(n) : 0.0);
  return h ? "ok" : std::string(error_code_name(h.err().code));
}

TEST(Limits, LargestAllowedHeaderIsParsedWithinBound) {
  REQUIRE_COUNTER();
  const auto bytes = make_file("{}", 0, limits::reference_max_header_bytes);
  EXPECT_EQ(parse_within_bound(bytes), "ok");
}

TEST(Limits, OversizedOrLyingLengthPrefixAllocatesNothingLarge) {
  REQUIRE_COUNTER();
  // One byte over the cap: rejected from the prefix alone.
  auto big = make_file("{}", 0, limits::reference_max_header_bytes + 1);
  {
    st_test::alloc_probe probe;
    auto h = parse_file_bytes(big, {});
    ASSERT_ERROR(h, error_code::header_too_large);
    EXPECT_LE(probe.peak(), slack);
  }
  big = {};
  // A prefix of 2^64 - 1 and one of 99,999,999 in a 24-byte file, through every reader.
  const auto dir = st_test::scratch_dir();
  for (std::uint64_t claimed : {UINT64_MAX, std::uint64_t{99'999'999}}) {
    std::vector<std::byte> lie(24, std::byte{' '});
    for (int i = 0; i < 8; ++i) lie[static_cast<std::size_t>(i)] = static_cast<std::byte>((claimed >> (8 * i)) & 0xff);
    const auto path = (dir / "lie.safetensors").string();
    st_test::write_bytes(path, lie);
    for (auto backend : {io_backend::mmap, io_backend::pread}) {
      st_test::alloc_probe probe;
      auto f = file::open(path, {backend, {}});
      ASSERT_FALSE(f.ok());
      EXPECT_TRUE(f.err().code == error_code::header_too_large || f.err().code == error_code::invalid_header_length);
      EXPECT_LE(probe.peak(), slack) << backend_name(backend);
    }
  }
}

TEST(Limits, OneMillionTensorsWithinBound) {
  REQUIRE_COUNTER();
  constexpr std::size_t count = 1'000'000;
  std::string json = "{";
  json.reserve(count * 60);
  for (std::size_t i = 0; i < count; ++i) {
    fmt::format_to(std::back_inserter(json), R"({}"{}":{{"dtype":"U8","shape":[],"data_offsets":[{},{}]}})",
                   i ? "," : "", i, i, i + 1);
  }
  json += "}";
  const auto bytes = make_file(json, count);
  json = {};
  EXPECT_EQ(parse_within_bound(bytes), "ok");
}

TEST(Limits, RankSixtyFourAndMillionDimShapesWithinBound) {
  REQUIRE_COUNTER();
  std::string dims64;
  for (int i = 0; i < 64; ++i) dims64 += i ? ",1" : "1";
  std::string json = "{";
  for (int t = 0; t < 10'000; ++t) {
    json += (t ? ",\"" : "\"") + std::to_string(t) + "\":{\"dtype\":\"U8\",\"shape\":[" + dims64 +
            "],\"data_offsets\":[" + std::to_string(t) + "," + std::to_string(t + 1) + "]}";
  }
  std::string long_shape;
  for (int i = 0; i < 1'000'000; ++i) long_shape += i ? ",1" : "1";
  json += ",\"long\":{\"dtype\":\"U8\",\"shape\":[" + long_shape + "],\"data_offsets\":[10000,10001]}}";
  const auto bytes = make_file(json, 10'001);
  EXPECT_EQ(parse_within_bound(bytes), "ok");
  EXPECT_EQ(parse_within_bound(bytes, {validation_policy::strict, std::nullopt}), "LimitExceeded");
}

TEST(Limits, DeeplyNestedJsonIsRejectedWithinBound) {
  REQUIRE_COUNTER();
  constexpr std::size_t depth = 10'000'000;
  for (const char* where : {"metadata", "unknown-field", "top"}) {
    SCOPED_TRACE(where);
    std::string nest(depth, '[');
    nest.append(depth, ']');
    std::string json;
    if (std::string_view(where) == "metadata") {
      json = "{\"__metadata__\":" + nest + "}";
    } else if (std::string_view(where) == "unknown-field") {
      json = "{\"w\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1],\"x\":" + nest + "}}";
    } else {
      json = nest;
    }
    nest = {};
    EXPECT_EQ(parse_within_bound(make_file(json, 1)), "InvalidHeaderDeserialization");
  }
}

TEST(Limits, PreadOpenWithinBound) {
  REQUIRE_COUNTER();
  const auto dir = st_test::scratch_dir();
  const auto path = (dir / "padded.safetensors").string();
  constexpr std::size_t n = 20'000'000;
  st_test::write_bytes(path, make_file("{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4, n));
  st_test::alloc_probe probe;
  auto f = file::open(path, {io_backend::pread, {}});
  ASSERT_OK(f) << f.err().to_string();
  EXPECT_LE(probe.peak(), 33 * n + slack);
}

TEST(Limits, CheckpointIndexWithinBound) {
  REQUIRE_COUNTER();
  std::string json = "{\"metadata\":{\"total_size\":1},\"weight_map\":{";
  for (int i = 0; i < 1'000'000; ++i) {
    fmt::format_to(std::back_inserter(json), R"({}"{}":"model-{}.safetensors")", i ? "," : "", i, i % 7);
  }
  json += "}}";
  const auto bytes = std::as_bytes(std::span(json));
  st_test::alloc_probe probe;
  auto index = safetensors::parse_checkpoint_index(bytes);
  ASSERT_OK(index);
  EXPECT_EQ(index->weight_map.size(), 1'000'000U);
  const std::size_t peak = probe.peak();
  EXPECT_LE(peak, parse_bound(json.size()));
  std::printf("index N = %zu bytes: peak heap %zu bytes (%.2f x N)\n", json.size(), peak,
              double(peak) / double(json.size()));
  // Nesting past 127 levels is refused without deep recursion.
  std::string nest(10'000'000, '[');
  nest.append(10'000'000, ']');
  json = "{\"weight_map\":{},\"x\":" + nest + "}";
  nest = {};
  st_test::alloc_probe probe2;
  auto deep = safetensors::parse_checkpoint_index(std::as_bytes(std::span(json)));
  ASSERT_ERROR(deep, error_code::invalid_index);
  EXPECT_LE(probe2.peak(), parse_bound(json.size()));
}

TEST(Limits, SliceSpecWithinBound) {
  REQUIRE_COUNTER();
  std::string spec;
  for (int i = 0; i < 200'000; ++i) spec += i ? ",1:2:3" : "1:2:3";
  st_test::alloc_probe probe;
  auto parsed = parse_slice_spec(spec);
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->size(), 200'000U);
  EXPECT_LE(probe.peak(), parse_bound(spec.size()));
}

}  // namespace
