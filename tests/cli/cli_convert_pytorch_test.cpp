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
#include "support/status_matchers.h"
#include "support/tensor_values.h"

namespace st = safetensors;
namespace fs = std::filesystem;

namespace {

using st_test::sha256_of;

const char* const sentinel = "/tmp/safetensors-pytorch-fixture-pwned";  // see make_pytorch_fixtures.py

// Every tensor of the converted file `out` against PyTorch's values for `fixture`.
void expect_output_matches(const fs::path& out, const std::string& fixture, std::size_t dropped = 0) {
  auto f = st::file::open(out.string());
  ASSERT_OK(f);
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
  ASSERT_OK(f);
  ASSERT_TRUE(f->header().metadata().has_value());
  EXPECT_EQ(f->header().metadata()->at("lm_head.weight"), "embed.weight");
  EXPECT_EQ(f->header().metadata()->at("format"), "pt");
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
  ASSERT_OK(f);
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
    ASSERT_OK(f);
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
      // A global on the code-execution list: refused as an attempt to run code.
      {"evil_os_system.pt", "refused: this file tries to run code: os.system at byte 2 of archive/data.pkl"},
      {"evil_eval_stack_global.pt", "tries to run code: builtins.eval"},
      {"evil_popen.pt", "tries to run code: subprocess.Popen"},
      {"evil_reduce_nonfunction.pt", "'torch.float32' cannot be called"},
      {"evil_inst.pt", "tries to run code: os.system"},
      {"evil_obj.pt", "tries to run code: os.system"},
      {"evil_newobj.pt", "tries to run code: subprocess.Popen"},
      {"evil_persid.pt", "persistent id is not a ('storage'"},
      {"bomb_memo.pt", "object tree is too large"},
      {"bomb_stack.pt", "stack deeper than"},
      {"bomb_nesting.pt", "dicts nested deeper than 64 levels"},
      {"bomb_string.pt", "string of 1073741824 bytes"},
      {"bomb_zip.pt", "refusing a likely zip bomb"},
      {"evil_dotdot.pt", ".."},
      {"truncated.pt", "truncated zip archive"},
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
  // A payload beside a tensor, saved by torch: refused in both modes, exit status 3.
  const auto beside = st_test::pytorch_fixture("evil_beside_tensor.pt").string();
  for (const bool strict : {false, true}) {
    std::vector<std::string> args = {"convert", beside, (dir / "beside.safetensors").string(), "-q"};
    if (strict) args.emplace_back("--strict");
    auto r = st_test::run_cli(args);
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_NE(r.err.find("refused: this file tries to run code: posix.system at byte "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "beside.safetensors"));
  }
  EXPECT_FALSE(fs::exists(sentinel)) << "a payload ran";
}

TEST(CliConvertPytorch, EveryPickleProtocolConvertsInBothContainers) {
  const auto dir = st_test::scratch_dir();
  for (int protocol = 1; protocol <= 5; ++protocol) {
    for (const char* container : {"zip", "legacy"}) {
      const std::string fixture = "protocol" + std::to_string(protocol) + "_" + container + ".pt";
      const auto out = dir / (fixture + ".safetensors");
      auto r = st_test::run_cli({"convert", st_test::pytorch_fixture(fixture).string(), out.string(), "-q"});
      ASSERT_EQ(r.status, 0) << fixture << ": " << r.err;
      expect_output_matches(out, fixture);
    }
  }
}

TEST(CliConvertPytorch, ObjectsAndUnconvertibleTensorsAreSkippedWithAWarningOrRefusedWithStrict) {
  const auto dir = st_test::scratch_dir();
  const auto out = dir / "opaque.safetensors";
  auto r = st_test::run_cli({"convert", st_test::pytorch_fixture("opaque.pt").string(), out.string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_output_matches(out, "opaque.pt");
  for (const char* key : {"'args'", "'np_step'", "'np_count'", "'path'", "'history'"}) {
    EXPECT_NE(r.err.find(std::string("warning: skipped ") + key), std::string::npos) << key << ": " << r.err;
  }
  EXPECT_NE(r.err.find("argparse.Namespace"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("'epoch'"), std::string::npos) << "plain values are summarised, not warned about: " << r.err;

  const auto tensors = dir / "tensors.safetensors";
  r = st_test::run_cli(
      {"convert", st_test::pytorch_fixture("unsupported_tensors.pt").string(), tensors.string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_output_matches(tensors, "unsupported_tensors.pt");
  EXPECT_NE(r.err.find("skipped 'quantized': a quantized tensor"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped 'sparse': a sparse tensor"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped 'complex128'"), std::string::npos) << r.err;

  for (const char* fixture : {"opaque.pt", "unsupported_tensors.pt"}) {
    const auto strict = dir / (std::string(fixture) + ".strict.safetensors");
    r = st_test::run_cli({"convert", st_test::pytorch_fixture(fixture).string(), strict.string(), "--strict"});
    EXPECT_EQ(r.status, 1) << fixture << ": " << r.err;
    EXPECT_NE(r.err.find("without --strict it would be skipped"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(strict)) << fixture;
  }
}

TEST(CliConvertPytorch, KeyEdgeCasesExitTwoSayingWhatTheKeyNames) {
  const auto dir = st_test::scratch_dir();
  const auto out = dir / "out.safetensors";
  const auto nested = st_test::pytorch_fixture("nested.pt").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"missing", "no entry 'missing'"},
      {"state_dict.nope", "no entry 'state_dict.nope'"},
      {"state_dict.head", "names a tensor (F32 [2, 2]), not a dict of tensors"},
      {"state_dict.head.x", "'state_dict.head' is a tensor"},
      {"epoch", "names an int"},
  };
  for (const auto& [key, says] : cases) {
    auto r = st_test::run_cli({"convert", nested, out.string(), "--key", key});
    EXPECT_EQ(r.status, 2) << key << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << key << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << key;
  }
  // A dict with no tensor under it is refused instead of writing an empty file.
  auto r =
      st_test::run_cli({"convert", st_test::pytorch_fixture("opaque.pt").string(), out.string(), "--key", "config"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("holds no tensor"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // The same in every shard of a sharded checkpoint.
  r = st_test::run_cli(
      {"convert", st_test::pytorch_fixture("sharded").string(), (dir / "shards/").string(), "--key", "missing"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no entry 'missing'"), std::string::npos) << r.err;
}

TEST(CliConvertPytorch, TruncatedZipSaysTruncated) {
  const auto whole = st_test::read_bytes(st_test::pytorch_fixture("basic.pt"));
  const auto dir = st_test::scratch_dir();
  const auto cut = dir / "cut.pt";
  st_test::write_bytes(
      cut, std::vector<std::byte>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(whole.size() / 2)));
  auto r = st_test::run_cli({"convert", cut.string(), (dir / "o.safetensors").string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("truncated zip archive: the file has " + std::to_string(whole.size() / 2) + " bytes"),
            std::string::npos)
      << r.err;
}
