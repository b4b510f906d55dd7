// SPDX-License-Identifier: Apache-2.0
// `safetensors stats`: exact statistics, NaN/Inf/zero counts, selection, JSON, errors.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <limits>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

const float inf = std::numeric_limits<float>::infinity();

std::filesystem::path stats_file() {
  const auto path = st_test::scratch_dir() / "s.safetensors";
  st_test::make_f32_file(path, {{"a", {2, 3}, {1, -2, 0, std::nanf(""), inf, 4}},
                                {"b.x", {4}, {-0.0F, 0, 0, 0}},
                                {"b.y", {1}, {std::nanf("")}}});
  return path;
}

TEST(CliStats, TableForEveryTensor) {
  const auto path = stats_file();
  auto r = st_test::run_cli({"stats", path.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "") << "no progress bar when stderr is not a terminal";
  EXPECT_EQ(
      r.out,
      "name  dtype         count           min           max          mean           std     nan     inf     zeros\n"
      "a     F32               6            -2             4          0.75       2.16506       1       1         1\n"
      "b.x   F32               4            -0             0             0             0       0       0         4\n"
      "b.y   F32               1             -             -             -             -       1       0         0\n");
}

TEST(CliStats, JsonFieldsAndSelection) {
  const auto path = stats_file();
  auto r = st_test::run_cli({"stats", path.string(), "a", "b.?", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  simdjson::dom::array tensors = doc["tensors"].get_array();
  ASSERT_EQ(tensors.size(), 3U);
  simdjson::dom::element a = tensors.at(0);
  EXPECT_EQ(a["name"].get_string().value(), "a");
  EXPECT_EQ(a["count"].get_uint64().value(), 6U);
  EXPECT_EQ(a["min"].get_double().value(), -2.0);
  EXPECT_EQ(a["max"].get_double().value(), 4.0);
  EXPECT_EQ(a["mean"].get_double().value(), 0.75);
  EXPECT_NEAR(a["std"].get_double().value(), std::sqrt(18.75 / 4), 1e-12);
  EXPECT_EQ(a["nan"].get_uint64().value(), 1U);
  EXPECT_EQ(a["pos_inf"].get_uint64().value(), 1U);
  EXPECT_EQ(a["neg_inf"].get_uint64().value(), 0U);
  EXPECT_EQ(a["zeros"].get_uint64().value(), 1U);
  simdjson::dom::element y = tensors.at(2);
  EXPECT_EQ(y["name"].get_string().value(), "b.y");
  EXPECT_TRUE(y["min"].is_null()) << "no finite value: null, since JSON has no NaN";
  EXPECT_TRUE(y["std"].is_null());
}

TEST(CliStats, EveryDtypeOfTheCorpusDecodes) {
  auto r =
      st_test::run_cli({"stats", "--json",
                        (st_test::conformance_dir() / "format" / "006-all-dtypes-writer-layout.safetensors").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  std::size_t n = 0;
  for (simdjson::dom::element t : doc["tensors"].get_array()) {
    ++n;
    const bool complex = t["dtype"].get_string().value() == "C64";
    EXPECT_EQ(t["count"].get_uint64().value(), complex ? 16U : 8U) << t["name"].get_string().value();
  }
  EXPECT_EQ(n, 22U);
}

TEST(CliStats, UnknownTensorIsAnError) {
  const auto path = stats_file();
  auto r = st_test::run_cli({"stats", path.string(), "zzz"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "safetensors: error: " + path.string() + ": no tensor matches 'zzz'\n");
}

}  // namespace
