// SPDX-License-Identifier: Apache-2.0
// The shapes of convert's input and output: a checkpoint is read from its directory or its
// index file; a directory path (existing, or ending in '/') is a sharded output, any other
// name one file (a sharded input is joined into it, never turned into a directory of
// that name); a sharded SafeTensors input is read as one namespace.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/sha256.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"
#include "support/status_matchers.h"
#include "support/tensor_values.h"

namespace {

namespace fs = std::filesystem;
using st_test::sha256_of;

/// Every tensor of the "sharded" fixture, in `file`, with PyTorch's values.
void expect_all_sharded_tensors(const fs::path& file) {
  ASSERT_TRUE(fs::is_regular_file(file)) << file;
  auto f = safetensors::file::open(file.string());
  ASSERT_OK(f);
  const auto& want = st_test::pytorch_expected().tensors.at("sharded");
  EXPECT_EQ(f->tensors().size(), want.size());
  for (const auto& t : f->tensors()) {
    ASSERT_TRUE(want.contains(std::string(t.name))) << t.name;
    EXPECT_EQ(sha256_of(f->view(t).data), want.at(std::string(t.name)).sha256) << t.name;
  }
}

TEST(CliConvertShapes, ShardedPytorchIntoOneFileOrADirectory) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path shards = st_test::pytorch_fixture("sharded");
  const fs::path index = shards / "pytorch_model.bin.index.json";
  fs::create_directory(dir / "out");
  // A file name: one file, the shards joined (it used to become a directory of that name).
  for (const auto& input : {shards, index}) {
    const fs::path one = dir / "out" / (input == index ? "from-index.safetensors" : "x.safetensors");
    auto r = st_test::run_cli({"convert", input.string(), one.string(), "-q"});
    ASSERT_EQ(r.status, 0) << input << ": " << r.err;
    expect_all_sharded_tensors(one);
  }
  // A directory path: shards and an index, from the directory or from the index file.
  for (const auto& input : {shards, index}) {
    const fs::path out = dir / (input == index ? "from-index" : "from-dir");
    auto r = st_test::run_cli({"convert", input.string(), out.string() + "/", "-q"});
    ASSERT_EQ(r.status, 0) << input << ": " << r.err;
    EXPECT_TRUE(fs::exists(out / "model.safetensors.index.json")) << out;
    r = st_test::run_cli({"merge", out.string(), (out / "merged.safetensors").string()});
    ASSERT_EQ(r.status, 0) << r.err;
    expect_all_sharded_tensors(out / "merged.safetensors");
  }
}

TEST(CliConvertShapes, SafetensorsCheckpointInputs) {
  const fs::path dir = st_test::scratch_dir();
  st_test::make_f32_file(dir / "model.safetensors", {{"a", {4}, {1, 2, 3, 4}}, {"b", {4}, {5, 6, 7, 8}}});
  ASSERT_EQ(
      st_test::run_cli({"shard", (dir / "model.safetensors").string(), (dir / "ck").string(), "--max-shard-size", "20"})
          .status,
      0);
  // Sharded: read as one namespace, shard after shard (the library's checkpoint source).
  for (const auto& input : {dir / "ck", dir / "ck" / "model.safetensors.index.json"}) {
    const fs::path out = dir / (input == dir / "ck" ? "joined-dir.safetensors" : "joined-index.safetensors");
    auto r = st_test::run_cli({"convert", input.string(), out.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("from SafeTensors (sharded)"), std::string::npos) << r.err;
    auto f = safetensors::file::open(out.string());
    ASSERT_OK(f);
    std::vector<float> values(4);
    for (const auto& [name, first] : {std::pair{"a", 1.0F}, std::pair{"b", 5.0F}}) {
      ASSERT_OK(f->read_into(name, std::as_writable_bytes(std::span(values)))) << name;
      EXPECT_EQ(values, (std::vector<float>{first, first + 1, first + 2, first + 3})) << name;
    }
  }
  // A directory holding one SafeTensors file is that file.
  fs::create_directory(dir / "single");
  fs::copy_file(dir / "model.safetensors", dir / "single" / "model.safetensors");
  auto r = st_test::run_cli({"convert", (dir / "single").string(), (dir / "single.npz").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "single.npz"));
}

}  // namespace
