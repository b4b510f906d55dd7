// SPDX-License-Identifier: Apache-2.0
// `safetensors convert` / `inspect` on PyTorch fixtures: outputs equal PyTorch's tensors
// bit for bit, --shared and --key behave as documented, and malicious inputs are refused
// without any side effect (the sentinel file their payloads would create never appears).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/sha256.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"

namespace st = safetensors;
namespace fs = std::filesystem;

namespace {

const char* const sentinel = "/tmp/safetensors-pytorch-fixture-pwned";  // see make_pytorch_fixtures.py

std::string sha256_of(std::span<const std::byte> bytes) {
  auto hash = st::sha256_hasher::create();
  EXPECT_TRUE(hash.ok());
  hash->update(bytes);
  return st::to_hex(hash->finish());
}

// Every tensor of the converted file `out` against PyTorch's values for `fixture`.
void expect_output_matches(const fs::path& out, const std::string& fixture, std::size_t dropped = 0) {
  auto f = st::file::open(out.string());
  ASSERT_TRUE(f.ok()) << f.err().to_string();
  const auto& want = st_test::pytorch_expected().tensors.at(fixture);
  EXPECT_EQ(f->tensors().size() + dropped, want.size());
  for (const auto& info : f->tensors()) {
    const std::string name(info.name);
    ASSERT_TRUE(want.contains(name)) << name;
    EXPECT_EQ(st::dtype_name(info.type), want.at(name).dtype) << name;
    EXPECT_EQ(st_test::shape_text({info.shape.begin(), info.shape.end()}), want.at(name).shape) << name;
    EXPECT_EQ(sha256_of(f->view(info).data), want.at(name).sha256) << name;
  }
}

}  // namespace

TEST(CliConvertPytorch, ConvertedTensorsEqualPytorchBitForBit) {
  const auto dir = st_test::scratch_dir();
  for (const char* fixture :
       {"basic.pt", "views.pt", "ordered.pt", "parameters.pt", "legacy.pt", "bigendian.pt", "float8.pt", "tied.pt"}) {
    const auto out = dir / (std::string(fixture) + ".safetensors");
    auto r = st_test::run_cli({"convert", st_test::pytorch_fixture(fixture).string(), out.string(), "-q"});
    ASSERT_EQ(r.status, 0) << fixture << ": " << r.err;
    EXPECT_EQ(r.out, "") << "nothing on stdout";
    EXPECT_EQ(r.err, "") << "-q silences the summary";
    expect_output_matches(out, fixture);
  }
}

TEST(CliConvertPytorch, SharedKeepCopiesAndDedupRecordsInMetadata) {
  const auto dir = st_test::scratch_dir();
  const auto keep = dir / "keep.safetensors";
  auto r = st_test::run_cli({"convert", st_test::pytorch_fixture("tied.pt").string(), keep.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("shared storage, each written as a copy: embed.weight, first_row, lm_head.weight"),
            std::string::npos)
      << r.err;
  expect_output_matches(keep, "tied.pt");

  const auto dedup = dir / "dedup.safetensors";
  r = st_test::run_cli({"convert", st_test::pytorch_fixture("tied.pt").string(), dedup.string(), "--shared", "dedup"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("deduplicated: lm_head.weight is embed.weight"), std::string::npos) << r.err;
  expect_output_matches(dedup, "tied.pt", 1);
  auto f = st::file::open(dedup.string());
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->meta().metadata().has_value());
  EXPECT_EQ(f->meta().metadata()->at("lm_head.weight"), "embed.weight");
  EXPECT_EQ(f->meta().metadata()->at("format"), "pt");
  EXPECT_NE(f->find("first_row"), nullptr);  // a partial view is copied, never dropped
}

TEST(CliConvertPytorch, NestedCheckpointFlattensOrSelectsKeyAndReportsSkipped) {
  const auto dir = st_test::scratch_dir();
  const auto flat = dir / "flat.safetensors";
  auto r = st_test::run_cli({"convert", st_test::pytorch_fixture("nested.pt").string(), flat.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("skipped epoch: not a tensor: int"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped history: not a tensor: list"), std::string::npos) << r.err;
  expect_output_matches(flat, "nested.pt");

  const auto selected = dir / "selected.safetensors";
  r = st_test::run_cli(
      {"convert", st_test::pytorch_fixture("nested.pt").string(), selected.string(), "--key", "state_dict"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto f = st::file::open(selected.string());
  ASSERT_TRUE(f.ok());
  EXPECT_NE(f->find("encoder.w"), nullptr);
  EXPECT_EQ(f->tensors().size(), 3u);
}

TEST(CliConvertPytorch, ShardedBinDirectoryBecomesShardedSafetensors) {
  const auto out = st_test::scratch_dir() / "out";
  // A directory output is a directory path: an existing directory, or a name ending in '/'.
  auto r = st_test::run_cli({"convert", st_test::pytorch_fixture("sharded").string(), out.string() + "/", "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(fs::exists(out / "model.safetensors.index.json"));
  const auto& want = st_test::pytorch_expected().tensors.at("sharded");
  std::size_t seen = 0;
  for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
    auto f = st::file::open((out / shard).string());
    ASSERT_TRUE(f.ok()) << f.err().to_string();
    for (const auto& info : f->tensors()) {
      EXPECT_EQ(sha256_of(f->view(info).data), want.at(std::string(info.name)).sha256);
      ++seen;
    }
  }
  EXPECT_EQ(seen, want.size());
}

TEST(CliConvertPytorch, InspectListsTensorsWithoutConverting) {
  auto r = st_test::run_cli({"inspect", st_test::pytorch_fixture("views.pt").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("format:      PyTorch checkpoint (zip container, little-endian)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("F32          [6, 4]                            96  strided view, shares storage 0"),
            std::string::npos)
      << r.out;
  r = st_test::run_cli({"inspect", "--json", st_test::pytorch_fixture("legacy.pt").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(R"("container":"legacy")"), std::string::npos) << r.out;
}

TEST(CliConvertPytorch, MaliciousInputsAreRefusedAndNoPayloadRuns) {
  fs::remove(sentinel);
  const auto dir = st_test::scratch_dir();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"evil_os_system.pt", "global 'os.system' is not allowed"},
      {"evil_eval_stack_global.pt", "global 'builtins.eval' is not allowed"},
      {"evil_popen.pt", "global 'subprocess.Popen' is not allowed"},
      {"evil_reduce_nonfunction.pt", "'torch.float32' cannot be called"},
      {"evil_inst.pt", "INST at pickle byte"},
      {"evil_obj.pt", "global 'os.system' is not allowed"},
      {"evil_newobj.pt", "global 'subprocess.Popen' is not allowed"},
      {"evil_persid.pt", "persistent id is not a ('storage'"},
      {"bomb_memo.pt", "object tree is too large"},
      {"bomb_stack.pt", "stack deeper than"},
      {"bomb_nesting.pt", "dicts nested deeper than 64 levels"},
      {"bomb_string.pt", "string of 1073741824 bytes"},
      {"bomb_zip.pt", "compressed storages are limited"},
      {"evil_dotdot.pt", ".."},
      {"truncated.pt", ""},
      {"truncated_pickle.pt", "truncated"},
  };
  for (const auto& [fixture, needle] : cases) {
    const auto out = dir / (fixture + ".safetensors");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"convert", st_test::pytorch_fixture(fixture).string(), out.string()},
                                               {"inspect", st_test::pytorch_fixture(fixture).string()}}) {
      auto r = st_test::run_cli(args);
      EXPECT_NE(r.status, 0) << args[0] << " " << fixture;
      EXPECT_NE(r.err.find("error: "), std::string::npos) << fixture << ": " << r.err;
      EXPECT_NE(r.err.find(needle), std::string::npos) << fixture << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(out)) << fixture << ": half-written output";
  }
  EXPECT_FALSE(fs::exists(sentinel)) << "a payload ran";
}
