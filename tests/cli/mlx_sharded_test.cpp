// SPDX-License-Identifier: Apache-2.0
// `safetensors quantize` / `dequantize` of sharded checkpoints: the same tensors, byte for
// byte, as for the single file.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/convert.h"
#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"

namespace {

using safetensors::dtype;
namespace fs = std::filesystem;

void run_ok(const std::string& args) {
  auto run = st_test::run_command(st_test::cli_shell(args), true);
  ASSERT_EQ(run.status, 0) << args << "\n" << run.out;
}

/// A small BF16 model: linear weights, an embedding, a norm and a bias.
fs::path write_bf16_model(const fs::path& dir) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0F, 0.05F);
  static std::vector<std::vector<std::uint16_t>> keep;
  keep.clear();
  for (std::size_t n : {64U * 128U, 32U * 128U, 96U * 128U, 48U * 64U, 128U, 32U}) {
    std::vector<std::uint16_t> v(n);
    for (auto& x : v) x = safetensors::f32_to_bf16(normal(rng));
    keep.push_back(std::move(v));
  }
  std::vector<safetensors::tensor_data> t = {
      {"model.embed_tokens.weight", dtype::BF16, {64, 128}, std::as_bytes(std::span(keep[0]))},
      {"model.layers.0.self_attn.q_proj.weight", dtype::BF16, {32, 128}, std::as_bytes(std::span(keep[1]))},
      {"model.layers.0.mlp.up_proj.weight", dtype::BF16, {96, 128}, std::as_bytes(std::span(keep[2]))},
      {"model.layers.1.mlp.down_proj.weight", dtype::BF16, {48, 64}, std::as_bytes(std::span(keep[3]))},
      {"model.norm.weight", dtype::BF16, {128}, std::as_bytes(std::span(keep[4]))},
      {"model.layers.0.self_attn.q_proj.bias", dtype::BF16, {32}, std::as_bytes(std::span(keep[5]))},
  };
  safetensors::write_options o;
  o.metadata = safetensors::metadata_map{{"source", "test"}};
  fs::create_directories(dir);
  const auto path = dir / "model.safetensors";
  EXPECT_TRUE(safetensors::write_file(path.string(), t, o));
  return path;
}

/// `sharded` (a checkpoint) holds exactly the tensors of the file `single`, byte for byte,
/// with the same `__metadata__` in every shard, and passes verify (sorted index, total_size).
void expect_same_tensors(const fs::path& single, const fs::path& sharded, std::size_t min_shards) {
  auto one = safetensors::file::open(single.string());
  ASSERT_TRUE(one) << one.err().to_string();
  auto many = safetensors::checkpoint::open(sharded.string());
  ASSERT_TRUE(many) << many.err().to_string();
  EXPECT_TRUE(many->sharded());
  EXPECT_GE(many->shards().size(), min_shards);
  ASSERT_EQ(many->tensors().size(), one->tensors().size());
  for (const auto& t : one->tensors()) {
    SCOPED_TRACE(std::string(t.name));
    const auto* loc = many->find(t.name);
    ASSERT_NE(loc, nullptr);
    EXPECT_EQ(loc->info->type, t.type);
    EXPECT_TRUE(std::ranges::equal(loc->info->shape, t.shape));
    EXPECT_TRUE(std::ranges::equal(many->file_of(*loc).view(*loc->info).data, one->view(t).data));
  }
  for (const auto& shard : many->shards()) EXPECT_EQ(shard.file.header().metadata(), one->header().metadata());
  auto report = safetensors::verify_checkpoint(sharded.string());
  ASSERT_TRUE(report) << report.err().to_string();
  EXPECT_TRUE(report->ok());
  std::ostringstream read;
  read << std::ifstream(many->index_path()).rdbuf();
  const std::string text = read.str();
  std::vector<std::string> keys;
  for (std::size_t at = text.find("\"weight_map\""); (at = text.find("\n    \"", at)) != std::string::npos; ++at) {
    keys.push_back(text.substr(at + 6, text.find('"', at + 6) - at - 6));
  }
  EXPECT_EQ(keys.size(), one->tensors().size());
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST(MlxSharded, DequantizeMatchesSingleFile) {
  const auto dir = st_test::scratch_dir();
  const auto model = write_bf16_model(dir / "bf16");
  fs::create_directories(dir / "q");
  run_ok("quantize " + st_test::quoted_path(model) + " " + st_test::quoted_path(dir / "q" / "model.safetensors") +
         " --config-out " + st_test::quoted_path(dir / "q" / "config.json"));
  // Small shards, so some layers' codes and scales land in different shards.
  run_ok("shard " + st_test::quoted_path(dir / "q" / "model.safetensors") + " " + st_test::quoted_path(dir / "qs") +
         " --max-shard-size 6KB");
  fs::copy_file(dir / "q" / "config.json", dir / "qs" / "config.json");
  auto in = safetensors::checkpoint::open((dir / "qs").string());
  ASSERT_TRUE(in) << in.err().to_string();
  ASSERT_GE(in->shards().size(), 3U);
  const auto* w = in->find("model.layers.0.mlp.up_proj.weight");
  const auto* s = in->find("model.layers.0.mlp.up_proj.scales");
  ASSERT_TRUE(w != nullptr && s != nullptr);
  EXPECT_NE(w->shard, s->shard);

  run_ok("dequantize " + st_test::quoted_path(dir / "q" / "model.safetensors") + " " +
         st_test::quoted_path(dir / "single.safetensors"));
  run_ok("dequantize " + st_test::quoted_path(dir / "qs") + " " + st_test::quoted_path(dir / "out") +
         " --max-shard-size 20KB");
  expect_same_tensors(dir / "single.safetensors", dir / "out", 3);

  // The index as input, and --dtype, work the same way.
  run_ok("dequantize " + st_test::quoted_path(dir / "q" / "model.safetensors") + " " +
         st_test::quoted_path(dir / "single32.safetensors") + " --dtype F32");
  run_ok("dequantize " + st_test::quoted_path(dir / "qs" / "model.safetensors.index.json") + " " +
         st_test::quoted_path(dir / "out32") + " --dtype F32 --max-shard-size 40KB");
  expect_same_tensors(dir / "single32.safetensors", dir / "out32", 2);
}

TEST(MlxSharded, QuantizeMatchesSingleFile) {
  const auto dir = st_test::scratch_dir();
  const auto model = write_bf16_model(dir / "bf16");
  run_ok("shard " + st_test::quoted_path(model) + " " + st_test::quoted_path(dir / "s") + " --max-shard-size 20KB");
  for (const char* mode : {"affine", "mxfp4"}) {
    SCOPED_TRACE(mode);
    const std::string m = std::string(" --mode ") + mode;
    run_ok("quantize " + st_test::quoted_path(model) + " " +
           st_test::quoted_path(dir / (std::string(mode) + ".safetensors")) + m);
    run_ok("quantize " + st_test::quoted_path(dir / "s" / "model.safetensors.index.json") + " " +
           st_test::quoted_path(dir / mode) + m + " --max-shard-size 3KB");
    expect_same_tensors(dir / (std::string(mode) + ".safetensors"), dir / mode, 3);
  }
  // A directory holding one file is a checkpoint too: OUT is a directory with one file.
  run_ok("quantize " + st_test::quoted_path(dir / "bf16") + " " + st_test::quoted_path(dir / "one"));
  auto one = safetensors::file::open((dir / "one" / "model.safetensors").string());
  ASSERT_TRUE(one) << one.err().to_string();
  auto want = safetensors::file::open((dir / "affine.safetensors").string());
  ASSERT_TRUE(want);
  EXPECT_FALSE(fs::exists(dir / "one" / "model.safetensors.index.json"));
  ASSERT_EQ(one->tensors().size(), want->tensors().size());
  for (const auto& t : want->tensors()) {
    auto got = one->view(t.name);
    ASSERT_TRUE(got) << t.name;
    EXPECT_TRUE(std::ranges::equal(got->data, want->view(t).data)) << t.name;
  }
}

TEST(MlxSharded, ConfigJsonOfTheCheckpointDirectoryIsRead) {
  const auto dir = st_test::scratch_dir();
  const auto model = write_bf16_model(dir / "bf16");
  run_ok("shard " + st_test::quoted_path(model) + " " + st_test::quoted_path(dir / "s") + " --max-shard-size 20KB");
  // Read from the checkpoint's directory (whether named directly or by its index), and
  // checked before anything is written.
  std::ofstream(dir / "s" / "config.json") << R"({"quantization": {"bits": 4, "mode": "int4"}})";
  auto run = st_test::run_command(
      st_test::cli_shell("dequantize " + st_test::quoted_path(dir / "s") + " " + st_test::quoted_path(dir / "out")),
      true);
  EXPECT_NE(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("int4"), std::string::npos) << run.out;
  EXPECT_TRUE(!fs::exists(dir / "out") || fs::is_empty(dir / "out"));
  run = st_test::run_command(
      st_test::cli_shell("dequantize " + st_test::quoted_path(dir / "s" / "model.safetensors.index.json") + " " +
                         st_test::quoted_path(dir / "out")),
      true);
  EXPECT_NE(run.out.find("int4"), std::string::npos) << run.out;
}

}  // namespace
