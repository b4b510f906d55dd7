// SPDX-License-Identifier: Apache-2.0
// The parser's fast paths give the same answers as the general ones: names and offsets
// in any JSON order (sorted runs are merged, not assumed), entries with many fields,
// the per-thread parser reused after errors and across sizes, and in-place parsing when
// the data pads the JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "header/header_builder.h"
#include "safetensors/header.h"
#include "support/byte_views.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
using st_test::bytes_of;

/// A header of `n` U8 tensors of one byte, named t<i>; `order` gives the JSON order of
/// tensor i, `slot` where its byte lies.
std::string header_text(const std::vector<std::size_t>& order, const std::vector<std::size_t>& slot,
                        const std::vector<std::string>& names) {
  std::string json = "{";
  for (std::size_t i : order) {
    if (json.size() > 1) json += ',';
    json += fmt::format(R"("{}":{{"dtype":"U8","shape":[1],"data_offsets":[{},{}]}})", names[i], slot[i], slot[i] + 1);
  }
  return json + "}";
}

std::vector<std::string> numbered(std::size_t n) {
  std::vector<std::string> names(n);
  for (std::size_t i = 0; i < n; ++i) names[i] = fmt::format("model.layers.{}.weight", i);
  return names;
}

TEST(HeaderFastPath, AnyJsonOrderGivesDataOrderAndWorkingLookups) {
  const std::size_t n = 300;
  const auto names = numbered(n);
  std::mt19937 rng(7);
  // Sorted, reversed, a few runs (like dtype groups), and shuffled.
  std::vector<std::vector<std::size_t>> orders;
  std::vector<std::size_t> ident(n);
  std::iota(ident.begin(), ident.end(), 0U);
  orders.push_back(ident);
  orders.emplace_back(ident.rbegin(), ident.rend());
  auto runs = ident;
  std::rotate(runs.begin(), runs.begin() + 100, runs.end());
  std::rotate(runs.begin() + 50, runs.begin() + 170, runs.end());
  orders.push_back(runs);
  auto shuffled = ident;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  orders.push_back(shuffled);
  for (const auto& order : orders) {
    for (const auto& slots : orders) {
      const std::string json = header_text(order, slots, names);
      auto h = safetensors::parse_header(bytes_of(json), 8 + json.size() + n);
      ASSERT_OK(h) << h.err().message;
      ASSERT_EQ(h->tensors().size(), n);
      for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(h->tensors()[k].begin, k) << "data order";
      for (std::size_t i = 0; i < n; ++i) {
        const auto* t = h->find(names[i]);
        ASSERT_NE(t, nullptr) << names[i];
        EXPECT_EQ(t->begin, slots[i]) << names[i];
      }
      EXPECT_EQ(h->find("model.layers.x.weight"), nullptr);
    }
  }
}

TEST(HeaderFastPath, DuplicateNamesAreFoundWhereverTheyAre) {
  auto names = numbered(50);
  std::vector<std::size_t> order(50);
  std::iota(order.begin(), order.end(), 0U);
  const std::vector<std::size_t>& slots = order;
  // Adjacent, far apart, and in an otherwise unsorted header: the smallest duplicate is named.
  for (auto [a, b] : {std::pair{10, 11}, std::pair{3, 40}}) {
    auto dup = names;
    dup[static_cast<std::size_t>(b)] = dup[static_cast<std::size_t>(a)];
    for (bool reversed : {false, true}) {
      auto o = order;
      if (reversed) std::reverse(o.begin(), o.end());
      const std::string json = header_text(o, slots, dup);
      auto h = safetensors::parse_header(bytes_of(json), 8 + json.size() + 50);
      ASSERT_ERROR(h, error_code::duplicate_key);
      EXPECT_EQ(h.err().tensor, dup[static_cast<std::size_t>(a)]);
    }
  }
}

TEST(HeaderFastPath, EntriesWithManyFieldsTakeTheGeneralPath) {
  std::string extra;
  for (int i = 0; i < 20; ++i) extra += fmt::format(R"(,"x{}":{})", i, i);
  const std::string ok = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1])" + extra + "}}";
  auto h = safetensors::parse_header(bytes_of(ok), 8 + ok.size() + 1);
  ASSERT_OK(h) << h.err().message;
  EXPECT_EQ(h->tensors()[0].name, "a");

  const std::string dup = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1])" + extra + R"(,"x3":0}})";
  auto d = safetensors::parse_header(bytes_of(dup), 8 + dup.size() + 1);
  ASSERT_ERROR(d, error_code::duplicate_key);
  EXPECT_NE(d.err().message.find("'x3'"), std::string::npos) << d.err().message;

  const std::string dup_small = R"({"a":{"dtype":"U8","shape":[1],"dtype":"U8","data_offsets":[0,1]}})";
  auto s = safetensors::parse_header(bytes_of(dup_small), 8 + dup_small.size() + 1);
  ASSERT_ERROR(s, error_code::duplicate_key);
  EXPECT_NE(s.err().message.find("'dtype'"), std::string::npos) << s.err().message;
}

TEST(HeaderFastPath, ReusedParserRecoversFromErrorsAndGrows) {
  const std::string good = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const std::string bad_utf8 = "{\"a\xff\":1}";
  const std::string bad_json = R"({"a":{"dtype":"F32",)";
  const std::string bad_dtype = R"({"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})";
  // The dtype cache starts empty: an empty dtype name must still be rejected.
  const std::string empty_dtype = R"({"b":{"dtype":"","shape":[1],"data_offsets":[0,1]}})";
  auto e = safetensors::parse_header(bytes_of(empty_dtype), 8 + empty_dtype.size() + 1);
  ASSERT_ERROR(e, error_code::invalid_header_deserialization);
  EXPECT_EQ(e.err().tensor, "b");
  for (int round = 0; round < 2; ++round) {
    auto u = safetensors::parse_header(bytes_of(bad_utf8), 8 + bad_utf8.size());
    ASSERT_ERROR(u, error_code::invalid_header);
    EXPECT_EQ(u.err().offset, 8U + 3U);
    auto j = safetensors::parse_header(bytes_of(bad_json), 8 + bad_json.size());
    ASSERT_ERROR(j, error_code::invalid_header_deserialization);
    auto t = safetensors::parse_header(bytes_of(bad_dtype), 8 + bad_dtype.size() + 4);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.err().message.find("F33"), std::string::npos);
    auto g = safetensors::parse_header(bytes_of(good), 8 + good.size() + 4);
    ASSERT_OK(g) << g.err().message;
    EXPECT_EQ(g->tensors()[0].type, safetensors::dtype::F32);
  }
  // A header bigger than the retained capacity (16 MiB), then a small one again.
  const std::size_t n = 200'000;
  const auto names = numbered(n);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0U);
  std::string big = header_text(order, order, names);
  big.resize(std::max<std::size_t>(big.size(), (std::size_t{17} << 20)), ' ');
  auto b = safetensors::parse_header(bytes_of(big), 8 + big.size() + n);
  ASSERT_OK(b) << b.err().message;
  EXPECT_EQ(b->tensors().size(), n);
  auto g = safetensors::parse_header(bytes_of(good), 8 + good.size() + 4);
  ASSERT_OK(g) << g.err().message;
}

TEST(HeaderFastPath, InPlaceParsingMatchesTheCopyingParse) {
  // The same header followed by data of 4, 63, 64 and 100 bytes: parse_file_bytes reads the
  // JSON in place only from 64 bytes on; every answer must match parse_header's.
  for (std::size_t data : {4U, 63U, 64U, 100U}) {
    const std::string json = fmt::format(R"({{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,{}]}}}})", data, data);
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[static_cast<std::size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xFF);
    file += json;
    file += std::string(data, 'x');
    auto whole = safetensors::parse_file_bytes(bytes_of(file));
    auto copied = safetensors::parse_header(bytes_of(json), file.size());
    ASSERT_OK(whole) << whole.err().message;
    ASSERT_OK(copied) << copied.err().message;
    EXPECT_EQ(whole->tensors()[0].end, data);
    EXPECT_EQ(copied->tensors()[0].end, data);
    // A truncated JSON fails the same way either way, even though data bytes follow it.
    const std::string cut = json.substr(0, json.size() - 2);
    auto padded = safetensors::detail::parse_header_padded(bytes_of(file).subspan(8, cut.size()), file.size(), {});
    auto plain = safetensors::parse_header(bytes_of(cut), file.size());
    ASSERT_FALSE(padded.ok());
    ASSERT_FALSE(plain.ok());
    EXPECT_EQ(padded.err().code, plain.err().code);
    EXPECT_EQ(padded.err().message, plain.err().message);
  }
}

}  // namespace
