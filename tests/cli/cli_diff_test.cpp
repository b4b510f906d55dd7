// SPDX-License-Identifier: Apache-2.0
// `safetensors diff`: names, dtypes, shapes, metadata, values with tolerances; exit codes.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>

#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;

struct pair_of_files {
  fs::path dir = st_test::scratch_dir();
  fs::path a = dir / "a.safetensors";
  fs::path b = dir / "b.safetensors";
};

TEST(CliDiff, IdenticalFilesAreEqual) {
  pair_of_files p;
  st_test::make_f32_file(p.a, {{"w", {3}, {1, std::nanf(""), 3}}}, safetensors::metadata_map{{"k", "v"}});
  st_test::make_f32_file(p.b, {{"w", {3}, {1, std::nanf(""), 3}}}, safetensors::metadata_map{{"k", "v"}});
  auto r = st_test::run_cli({"diff", p.a.string(), p.b.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "equal: 1 tensor, metadata identical\n");
}

TEST(CliDiff, ReportsEveryKindOfDifference) {
  pair_of_files p;
  st_test::make_f32_file(
      p.a, {{"same", {2}, {1, 2}}, {"vals", {4}, {1, 2, 3, 4}}, {"shape", {2, 1}, {1, 2}}, {"gone", {1}, {0}}},
      safetensors::metadata_map{{"k", "1"}, {"old", "x"}});
  st_test::make_f32_file(
      p.b, {{"same", {2}, {1, 2}}, {"vals", {4}, {1, 2.5F, 3, 2}}, {"shape", {1, 2}, {1, 2}}, {"new", {1}, {0}}},
      safetensors::metadata_map{{"k", "2"}, {"added", "y"}});
  auto r = st_test::run_cli({"diff", p.a.string(), p.b.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out,
            "metadata: key \"k\" differs: \"1\" vs \"2\"\n"
            "metadata: key \"old\" only in A\n"
            "metadata: key \"added\" only in B\n"
            "only in A: gone\n"
            "only in B: new\n"
            "shape differs: shape: [2, 1] vs [1, 2]\n"
            "values differ: vals: 2 of 4 values, max abs error 2, max rel error 1 (first at index 1: 2 vs 2.5)\n"
            "different: 2 tensors of 3 in common differ, 1 only in A, 1 only in B, 3 metadata keys differ; values "
            "differ in 1 of 2 tensors compared\n");
}

TEST(CliDiff, TolerancesFollowAllclose) {
  pair_of_files p;
  st_test::make_f32_file(p.a, {{"w", {3}, {1.0F, 100.0F, 0.0F}}});
  st_test::make_f32_file(p.b, {{"w", {3}, {1.001F, 100.5F, 0.0F}}});
  EXPECT_EQ(st_test::run_cli({"diff", p.a.string(), p.b.string()}).status, 1);
  // |a - b| <= atol + rtol * |b|: 0.001 <= 0.01, 0.5 <= 0.01 + 0.01 * 100.5
  EXPECT_EQ(st_test::run_cli({"diff", p.a.string(), p.b.string(), "--atol", "0.01", "--rtol", "0.01"}).status, 0);
  EXPECT_EQ(st_test::run_cli({"diff", p.a.string(), p.b.string(), "--atol", "0.01"}).status, 1);
  EXPECT_EQ(st_test::run_cli({"diff", p.a.string(), p.b.string(), "--rtol", "0.005"}).status, 0);
  EXPECT_EQ(st_test::run_cli({"diff", p.a.string(), p.b.string(), "--rtol", "-1"}).status, 2);
}

TEST(CliDiff, JsonSaysWhichTensorsDifferAndByHowMuch) {
  pair_of_files p;
  st_test::make_f32_file(p.a, {{"x", {2}, {1, 2}}, {"y", {2}, {1, 2}}});
  st_test::make_f32_file(p.b, {{"x", {2}, {1, 2}}, {"y", {2}, {1, 1.5F}}});
  auto r = st_test::run_cli({"diff", "--json", p.a.string(), p.b.string()});
  EXPECT_EQ(r.status, 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_FALSE(doc["equal"].get_bool().value());
  EXPECT_EQ(doc["only_in_a"].get_array().size(), 0U);
  simdjson::dom::element x = doc["tensors"].at(0);
  simdjson::dom::element y = doc["tensors"].at(1);
  EXPECT_EQ(x["name"].get_string().value(), "x");
  EXPECT_TRUE(x["equal"].get_bool().value());
  EXPECT_EQ(x["max_abs"].get_double().value(), 0.0);
  EXPECT_EQ(y["name"].get_string().value(), "y");
  EXPECT_FALSE(y["equal"].get_bool().value());
  EXPECT_EQ(y["mismatched"].get_uint64().value(), 1U);
  EXPECT_EQ(y["max_abs"].get_double().value(), 0.5);
  EXPECT_EQ(y["max_rel"].get_double().value(), 0.5 / 1.5);
}

TEST(CliDiff, DifferentDtypesCompareValuesToo) {
  const auto dir = st_test::conformance_dir() / "format";
  pair_of_files p;
  st_test::make_f32_file(p.a, {{"w", {2}, {1.0F, 2.0F}}});
  // Same values as BF16: the dtype differs, the values do not.
  std::vector<std::uint16_t> bf16{0x3F80, 0x4000};
  std::vector<safetensors::tensor_data> data{
      {"w", safetensors::dtype::BF16, {2}, std::as_bytes(std::span<const std::uint16_t>(bf16))}};
  ASSERT_OK(safetensors::write_file(p.b.string(), data));
  auto r = st_test::run_cli({"diff", p.a.string(), p.b.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "dtype differs: w: F32 vs BF16, values match\n"
            "different: 1 tensor of 1 in common differs, 0 only in A, 0 only in B, 0 metadata keys differ; values "
            "match (1 tensor compared)\n");
}

TEST(CliDiff, IgnoreDtypeComparesValuesAcrossACast) {
  pair_of_files p;
  st_test::make_f32_file(p.a, {{"w", {3}, {1.0F, 2.0F, 0.1F}}, {"b", {1}, {7.0F}}});
  // The same tensor cast to BF16: 0.1 becomes 0.10009765625, within rtol 1e-2.
  std::vector<std::uint16_t> bf16{0x3F80, 0x4000, 0x3DCD};
  std::vector<float> b{7.0F};
  std::vector<safetensors::tensor_data> data{
      {"w", safetensors::dtype::BF16, {3}, std::as_bytes(std::span<const std::uint16_t>(bf16))},
      {"b", safetensors::dtype::F32, {1}, std::as_bytes(std::span<const float>(b))}};
  ASSERT_OK(safetensors::write_file(p.b.string(), data));
  auto exact = st_test::run_cli({"diff", "--ignore-dtype", p.a.string(), p.b.string()});
  EXPECT_EQ(exact.status, 1);
  EXPECT_NE(exact.out.find("dtype ignored: w: F32 vs BF16, values differ\n"), std::string::npos) << exact.out;
  EXPECT_NE(exact.out.find("values differ in 1 of 2 tensors compared"), std::string::npos) << exact.out;
  auto close = st_test::run_cli({"diff", "--ignore-dtype", "--rtol", "1e-2", p.a.string(), p.b.string()});
  EXPECT_EQ(close.status, 0) << close.out;
  EXPECT_EQ(close.out,
            "dtype ignored: w: F32 vs BF16, values match\n"
            "equal: 2 tensors, metadata identical (1 dtype change ignored, values match)\n");
  // Without --ignore-dtype the dtype alone still makes them different, and the values verdict is given.
  auto strict = st_test::run_cli({"diff", "--rtol", "1e-2", p.a.string(), p.b.string()});
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.out.find("dtype differs: w: F32 vs BF16, values match\n"), std::string::npos) << strict.out;
  auto json = st_test::run_cli({"diff", "--json", "--ignore-dtype", "--rtol", "1e-2", p.a.string(), p.b.string()});
  EXPECT_EQ(json.status, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  EXPECT_TRUE(doc["equal"].get_bool().value());
  for (auto t : doc["tensors"].get_array()) EXPECT_TRUE(t["values_equal"].get_bool().value());
}

TEST(CliDiff, UnreadableInputExits2) {
  pair_of_files p;
  st_test::make_f32_file(p.a, {{"w", {1}, {1}}});
  auto r = st_test::run_cli({"diff", p.a.string(), (p.dir / "absent").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("safetensors: error: " + (p.dir / "absent").string() + ": ", 0), 0U) << r.err;
  EXPECT_EQ(st_test::run_cli({"diff", p.a.string()}).status, 2);
}

}  // namespace
