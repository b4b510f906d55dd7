// SPDX-License-Identifier: Apache-2.0
// Reading commands on checkpoint directories (meta, stats, inspect --tree, JSON total_size,
// a stale total_size), dump's precision and JSON, verify --json, inspect's numbers.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using st_test::run_cli;

/// A two-shard checkpoint of layers.0.w, layers.1.w (F32 [4]) with {"format":"pt"} in both shards.
fs::path two_shards() {
  const auto dir = st_test::scratch_dir() / "ckpt";
  fs::create_directories(dir);
  std::vector<float> a{1, 2, 3, 4};
  std::vector<float> b{-1, 0, 0, 8};
  std::vector<safetensors::tensor_data> tensors{
      {"layers.0.w", safetensors::dtype::F32, {4}, std::as_bytes(std::span<const float>(a))},
      {"layers.1.w", safetensors::dtype::F32, {4}, std::as_bytes(std::span<const float>(b))}};
  safetensors::shard_write_options options;
  options.max_shard_bytes = 16;
  options.file.metadata = safetensors::metadata_map{{"format", "pt"}};
  auto written = safetensors::write_checkpoint(dir.string(), tensors, options);
  EXPECT_OK(written);
  return dir;
}

void set_total_size(const fs::path& dir, const std::string& value) {
  const auto index = dir / "model.safetensors.index.json";
  std::stringstream read;
  read << std::ifstream(index).rdbuf();
  std::string text = read.str();
  const auto at = text.find("\"total_size\": ");
  ASSERT_NE(at, std::string::npos) << text;
  const auto end = text.find_first_of(",\n}", at + 14);
  text.replace(at + 14, end - at - 14, value);
  std::ofstream(index, std::ios::trunc) << text;
}

TEST(CliCheckpointRead, MetaAndStatsTakeADirectory) {
  const auto dir = two_shards();
  auto meta = run_cli({"meta", dir.string(), "format"});
  EXPECT_EQ(meta.status, 0) << meta.err;
  EXPECT_EQ(meta.out, "pt\n");
  auto stats = run_cli({"stats", "--json", dir.string()});
  ASSERT_EQ(stats.status, 0) << stats.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(stats.out).get(doc), simdjson::SUCCESS) << stats.out;
  auto tensors = doc["tensors"].get_array();
  ASSERT_EQ(tensors.size(), 2U);
  EXPECT_EQ(tensors.at(0)["name"].get_string().value(), "layers.0.w");
  EXPECT_EQ(tensors.at(1)["max"].get_double().value(), 8.0);
  EXPECT_EQ(run_cli({"stats", dir.string(), "layers.1.*"}).status, 0);
  EXPECT_EQ(run_cli({"stats", dir.string(), "nomatch*"}).status, 2);
}

TEST(CliCheckpointRead, InspectTreeAndJsonOfADirectory) {
  const auto dir = two_shards();
  auto tree = run_cli({"inspect", "--tree", dir.string()});
  ASSERT_EQ(tree.status, 0) << tree.err;
  const std::string all = tree.out.substr(0, tree.out.find('\n'));
  EXPECT_EQ(all.rfind("(all) ", 0), 0U) << tree.out;
  EXPECT_TRUE(all.ends_with(" 8  2 tensors")) << tree.out;
  EXPECT_NE(tree.out.find("layers"), std::string::npos) << tree.out;
  auto json = run_cli({"inspect", "--json", dir.string()});
  ASSERT_EQ(json.status, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  EXPECT_TRUE(doc["metadata"]["total_size"].is_uint64()) << json.out;
  EXPECT_EQ(doc["metadata"]["total_size"].get_uint64().value(), 32U);
}

TEST(CliCheckpointRead, AWrongTotalSizeWarnsReadersAndFailsVerify) {
  const auto dir = two_shards();
  set_total_size(dir, "1000");
  const std::string warning =
      "safetensors: warning: " + (dir / "model.safetensors.index.json").string() + ": metadata.total_size is 1000";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"inspect", dir.string()},
                                             {"ls", dir.string()},
                                             {"dump", dir.string(), "layers.0.w"},
                                             {"meta", dir.string()},
                                             {"stats", dir.string()}}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.status, 0) << args.front() << ": " << r.err;
    EXPECT_NE(r.err.find(warning), std::string::npos) << args.front() << ": " << r.err;
    EXPECT_EQ(r.out.find("warning"), std::string::npos) << args.front();
  }
  auto verify = run_cli({"verify", dir.string()});
  EXPECT_EQ(verify.status, 1);
  EXPECT_NE(verify.out.find("total_size mismatch"), std::string::npos) << verify.out;
}

TEST(CliVerify, JsonHasTheVerdictShardsAndProblems) {
  const auto dir = two_shards();
  auto ok = run_cli({"verify", "--json", "--checksums", dir.string()});
  ASSERT_EQ(ok.status, 0) << ok.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(ok.out).get(doc), simdjson::SUCCESS) << ok.out;
  EXPECT_TRUE(doc["ok"].get_bool().value());
  EXPECT_EQ(doc["tensors"].get_uint64().value(), 2U);
  EXPECT_EQ(doc["shards"].get_array().size(), 2U);
  EXPECT_EQ(std::string(doc["shards"].at(0)["sha256"].get_string().value()).size(), 64U);
  EXPECT_EQ(doc["problems"].get_array().size(), 0U);
  set_total_size(dir, "5");
  auto bad = run_cli({"verify", "--json", dir.string()});
  EXPECT_EQ(bad.status, 1);
  ASSERT_EQ(parser.parse(bad.out).get(doc), simdjson::SUCCESS) << bad.out;
  EXPECT_FALSE(doc["ok"].get_bool().value());
  ASSERT_EQ(doc["problems"].get_array().size(), 1U);
  EXPECT_EQ(doc["problems"].at(0)["kind"].get_string().value(), "total_size mismatch");
  EXPECT_EQ(doc["problems"].at(0)["code"].get_string().value(), "ShardMismatch");
}

/// A file with one tensor of `type` holding `bits` (16-bit codes).
fs::path half_file(safetensors::dtype type, std::vector<std::uint16_t> bits) {
  const auto path = st_test::scratch_dir() / "half.safetensors";
  std::vector<safetensors::tensor_data> data{
      {"w", type, {bits.size()}, std::as_bytes(std::span<const std::uint16_t>(bits))}};
  EXPECT_OK(safetensors::write_file(path.string(), data));
  return path;
}

TEST(CliDump, HalfPrecisionPrintsWithItsOwnPrecision) {
  // BF16 0x3DCD = 0.10009765625, F16 0x2E66 = 0.0999755859375: numpy prints both as 0.1.
  auto bf16 = run_cli({"dump", half_file(safetensors::dtype::BF16, {0x3DCD, 0x3F80, 0xC020}).string(), "w"});
  ASSERT_EQ(bf16.status, 0) << bf16.err;
  EXPECT_EQ(bf16.out, "w: BF16 [3]\n[0.1, 1, -2.5]\n");
  auto f16 = run_cli({"dump", half_file(safetensors::dtype::F16, {0x2E66, 0x3555, 0x7C00}).string(), "w"});
  ASSERT_EQ(f16.status, 0) << f16.err;
  EXPECT_EQ(f16.out, "w: F16 [3]\n[0.1, 0.3333, inf]\n");
}

TEST(CliDump, JsonHasShapeSliceAndValues) {
  const auto path = half_file(safetensors::dtype::F16, {0x2E66, 0x3C00, 0x7E00, 0x4000});
  auto r = run_cli({"dump", "--json", "--slice", "1:", path.string(), "w"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, R"({"tensor":"w","dtype":"F16","shape":[4],"slice":"1:","slice_shape":[3],"truncated":false,)"
                   R"("values":[1,null,2]})"
                   "\n");
  auto cut = run_cli({"dump", "--json", "--limit", "2", path.string(), "w"});
  ASSERT_EQ(cut.status, 0) << cut.err;
  EXPECT_NE(cut.out.find(R"("truncated":true,"values":[0.1,1]})"), std::string::npos) << cut.out;
}

TEST(CliInspect, LargeCountsHaveThousandsSeparators) {
  const auto path = st_test::scratch_dir() / "big.safetensors";
  std::vector<std::uint8_t> zeros(1234567);
  std::vector<safetensors::tensor_data> data{
      {"w", safetensors::dtype::U8, {1234567}, std::as_bytes(std::span<const std::uint8_t>(zeros))}};
  ASSERT_OK(safetensors::write_file(path.string(), data));
  auto r = run_cli({"inspect", path.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("parameters:  1,234,567\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1,234,567 params"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1,234,647 bytes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[0, 1,234,567]"), std::string::npos) << r.out;
  // Only the shape keeps plain digits, as numpy prints shapes.
  EXPECT_EQ(r.out.find("1234567"), r.out.find("[1234567]") + 1) << r.out;
  EXPECT_EQ(r.out.find("1234567", r.out.find("[1234567]") + 2), std::string::npos) << r.out;
}

TEST(CliInspect, QuantizedLayersCountLogicalParameters) {
  // A 4-bit affine layer of logical shape [2, 64]: packed U32 [2, 8], scales and biases [2, 1] (group 64).
  const auto path = st_test::scratch_dir() / "q.safetensors";
  std::vector<std::uint32_t> packed(16, 0);
  std::vector<float> scales(2, 1.0F);
  std::vector<float> norm(64, 1.0F);
  std::vector<safetensors::tensor_data> data{
      {"l.weight", safetensors::dtype::U32, {2, 8}, std::as_bytes(std::span<const std::uint32_t>(packed))},
      {"l.scales", safetensors::dtype::F32, {2, 1}, std::as_bytes(std::span<const float>(scales))},
      {"l.biases", safetensors::dtype::F32, {2, 1}, std::as_bytes(std::span<const float>(scales))},
      {"norm", safetensors::dtype::F32, {64}, std::as_bytes(std::span<const float>(norm))}};
  safetensors::write_options options;
  options.metadata = safetensors::metadata_map{{"quantization_bits", "4"}, {"quantization_group_size", "64"}};
  ASSERT_OK(safetensors::write_file(path.string(), data, options));
  auto r = run_cli({"inspect", path.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("parameters:  192\n"), std::string::npos) << r.out;  // 2 x 64 + 64
  auto tree = run_cli({"inspect", "--tree", path.string()});
  ASSERT_EQ(tree.status, 0) << tree.err;
  const std::string all = tree.out.substr(0, tree.out.find('\n'));
  EXPECT_EQ(all.rfind("(all) ", 0), 0U) << tree.out;
  EXPECT_TRUE(all.ends_with(" 192  4 tensors")) << tree.out;
}

}  // namespace
