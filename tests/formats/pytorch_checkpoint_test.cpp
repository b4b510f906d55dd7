// SPDX-License-Identifier: Apache-2.0
// torch_checkpoint over the fixtures of scripts/fixtures/make_pytorch_fixtures.py: every
// tensor's bytes equal PyTorch's (SHA-256 recorded at generation time), and every
// malicious file is refused with a specific error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "safetensors/formats/pytorch.h"
#include "safetensors/sha256.h"
#include "support/pytorch_fixtures.h"

namespace st = safetensors;

namespace {

using st_test::pytorch_expected;
using st_test::shape_text;

std::filesystem::path fixture(const std::string& name) { return st_test::pytorch_fixture(name); }

std::string tensor_sha256(const st::torch_checkpoint& ckpt, std::size_t index, std::size_t chunk = 7) {
  auto hash = st::sha256_hasher::create();
  EXPECT_TRUE(hash.ok());
  auto ok = ckpt.read_tensor(
      index,
      [&](std::span<const std::byte> bytes) -> st::status {
        hash->update(bytes);
        return {};
      },
      chunk);
  EXPECT_TRUE(ok.ok()) << ok.err().to_string();
  return st::to_hex(hash->finish());
}

// Opens `name` and compares every tensor and skipped entry with expected.tsv.
void expect_matches_pytorch(const std::string& name, const std::string& expected_name = "") {
  const auto& want = pytorch_expected().tensors.at(expected_name.empty() ? name : expected_name);
  auto ckpt = st::torch_checkpoint::open(fixture(name).string());
  ASSERT_TRUE(ckpt.ok()) << ckpt.err().to_string();
  ASSERT_EQ(ckpt->tensors().size(), want.size()) << name;
  for (std::size_t i = 0; i < ckpt->tensors().size(); ++i) {
    const auto& t = ckpt->tensors()[i];
    ASSERT_TRUE(want.contains(t.name)) << name << ": unexpected tensor " << t.name;
    const auto& w = want.at(t.name);
    EXPECT_EQ(st::dtype_name(t.type), w.dtype) << name << ": " << t.name;
    EXPECT_EQ(shape_text(t.shape), w.shape) << name << ": " << t.name;
    EXPECT_EQ(tensor_sha256(*ckpt, i), w.sha256) << name << ": " << t.name;
    EXPECT_EQ(tensor_sha256(*ckpt, i, 1 << 20), w.sha256) << name << ": " << t.name << " (one chunk)";
  }
  std::vector<std::string> skipped;
  for (const auto& s : ckpt->skipped()) skipped.push_back(s.name);
  std::sort(skipped.begin(), skipped.end());
  auto it = pytorch_expected().skipped.find(expected_name.empty() ? name : expected_name);
  EXPECT_EQ(skipped, it == pytorch_expected().skipped.end() ? std::vector<std::string>{} : it->second) << name;
}

st::error open_error(const std::string& name) {
  auto ckpt = st::torch_checkpoint::open(fixture(name).string());
  EXPECT_FALSE(ckpt.ok()) << name << " was accepted";
  if (ckpt.ok()) return {};
  EXPECT_EQ(ckpt.err().path, fixture(name).string());
  return ckpt.err();
}

}  // namespace

TEST(PytorchCheckpoint, DtypesScalarsAndEmptyTensorsMatchPytorch) { expect_matches_pytorch("basic.pt"); }
TEST(PytorchCheckpoint, ViewsAreMaterialisedContiguously) { expect_matches_pytorch("views.pt"); }
TEST(PytorchCheckpoint, TiedWeightsShareAStorage) {
  expect_matches_pytorch("tied.pt");
  auto ckpt = st::torch_checkpoint::open(fixture("tied.pt").string());
  ASSERT_TRUE(ckpt.ok());
  auto groups = st::shared_storage_groups(ckpt->tensors());
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].size(), 3u);
  const auto& t = ckpt->tensors();
  EXPECT_EQ(t[groups[0][0]].name, "embed.weight");
  EXPECT_TRUE(st::same_view(t[groups[0][0]], t[groups[0][2]]));   // embed.weight, lm_head.weight
  EXPECT_FALSE(st::same_view(t[groups[0][0]], t[groups[0][1]]));  // first_row is a slice
}
TEST(PytorchCheckpoint, OrderedDictStateDictAndParameters) {
  expect_matches_pytorch("ordered.pt");
  expect_matches_pytorch("parameters.pt");
}
TEST(PytorchCheckpoint, NestedDictsFlattenAndNonTensorsAreSkipped) {
  expect_matches_pytorch("nested.pt");
  auto ckpt = st::torch_checkpoint::open(fixture("nested.pt").string());
  ASSERT_TRUE(ckpt.ok());
  for (const auto& s : ckpt->skipped()) {
    if (s.name == "epoch") {
      EXPECT_EQ(s.reason, "not a tensor: int");
    }
    if (s.name == "name") {
      EXPECT_EQ(s.reason, "not a tensor: str");
    }
  }
}
TEST(PytorchCheckpoint, KeySelectsANestedStateDict) {
  st::torch_open_options options;
  options.key = "state_dict";
  auto ckpt = st::torch_checkpoint::open(fixture("nested.pt").string(), options);
  ASSERT_TRUE(ckpt.ok()) << ckpt.err().to_string();
  ASSERT_EQ(ckpt->tensors().size(), 3u);
  EXPECT_EQ(ckpt->tensors()[0].name, "encoder.w");
  EXPECT_TRUE(ckpt->skipped().empty());
  options.key = "state_dict.encoder";
  ckpt = st::torch_checkpoint::open(fixture("nested.pt").string(), options);
  ASSERT_TRUE(ckpt.ok()) << ckpt.err().to_string();
  EXPECT_EQ(ckpt->tensors().size(), 2u);
  options.key = "model";
  ckpt = st::torch_checkpoint::open(fixture("nested.pt").string(), options);
  ASSERT_FALSE(ckpt.ok());
  EXPECT_EQ(ckpt.err().code, st::error_code::invalid_argument);
  EXPECT_NE(ckpt.err().message.find("top-level keys: state_dict, epoch"), std::string::npos) << ckpt.err().message;
}
TEST(PytorchCheckpoint, LegacyFormatIsRead) {
  expect_matches_pytorch("legacy.pt");
  expect_matches_pytorch("legacy_tied.pt");
  auto ckpt = st::torch_checkpoint::open(fixture("legacy.pt").string());
  ASSERT_TRUE(ckpt.ok());
  EXPECT_EQ(ckpt->container(), st::torch_container::legacy);
}
TEST(PytorchCheckpoint, BigEndianStoragesAreSwapped) {
  auto ckpt = st::torch_checkpoint::open(fixture("bigendian.pt").string());
  ASSERT_TRUE(ckpt.ok()) << ckpt.err().to_string();
  EXPECT_TRUE(ckpt->big_endian());
  expect_matches_pytorch("bigendian.pt");
}
TEST(PytorchCheckpoint, Float8ThroughRebuildTensorV3) { expect_matches_pytorch("float8.pt"); }

TEST(PytorchCheckpoint, MaliciousPicklesAreRefused) {
  struct refusal {
    const char* file;
    st::error_code code;
    const char* needle;
  };
  const refusal cases[] = {
      {"evil_os_system.pt", st::error_code::unsafe_content,
       "GLOBAL at pickle byte 2: global 'os.system' is not allowed"},
      {"evil_eval_stack_global.pt", st::error_code::unsafe_content,
       "STACK_GLOBAL at pickle byte 24: global 'builtins.eval'"},
      {"evil_popen.pt", st::error_code::unsafe_content, "GLOBAL at pickle byte 10: global 'subprocess.Popen'"},
      {"evil_reduce_nonfunction.pt", st::error_code::unsafe_content, "REDUCE at pickle byte"},
      {"evil_inst.pt", st::error_code::unsafe_content, "INST at pickle byte"},
      {"evil_obj.pt", st::error_code::unsafe_content, "GLOBAL at pickle byte 3: global 'os.system'"},
      {"evil_newobj.pt", st::error_code::unsafe_content, "'subprocess.Popen' is not allowed"},
      {"evil_persid.pt", st::error_code::unsafe_content, "BINPERSID at pickle byte"},
      {"bomb_memo.pt", st::error_code::limit_exceeded, "object tree is too large"},
      {"bomb_stack.pt", st::error_code::limit_exceeded, "NONE at pickle byte 131074: stack deeper than 131072"},
      {"bomb_nesting.pt", st::error_code::limit_exceeded, "dicts nested deeper than 64 levels"},
      {"bomb_string.pt", st::error_code::limit_exceeded, "BINUNICODE at pickle byte 2: string of 1073741824 bytes"},
      {"truncated_pickle.pt", st::error_code::invalid_format, "truncated"},
  };
  for (const auto& c : cases) {
    auto e = open_error(c.file);
    EXPECT_EQ(e.code, c.code) << c.file << ": " << e.to_string();
    EXPECT_NE(e.message.find(c.needle), std::string::npos) << c.file << ": " << e.to_string();
  }
}

TEST(PytorchCheckpoint, MaliciousContainersAreRefused) {
  auto dotdot = open_error("evil_dotdot.pt");
  EXPECT_EQ(dotdot.code, st::error_code::unsafe_path) << dotdot.to_string();
  auto truncated = open_error("truncated.pt");
  EXPECT_EQ(truncated.code, st::error_code::invalid_format) << truncated.to_string();
  // The zip bomb opens (its pickle is fine) but its storage is never inflated past the cap.
  auto bomb = st::torch_checkpoint::open(fixture("bomb_zip.pt").string());
  if (bomb.ok()) {
    auto read = bomb->read_tensor(0, [](std::span<const std::byte>) -> st::status { return {}; });
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.err().code, st::error_code::unsafe_content) << read.err().to_string();
  } else {
    EXPECT_EQ(bomb.err().code, st::error_code::unsafe_content) << bomb.err().to_string();
  }
}

TEST(PytorchCheckpoint, NotACheckpoint) {
  auto e = open_error("expected.tsv");
  EXPECT_EQ(e.code, st::error_code::invalid_format);
  EXPECT_NE(e.message.find("not a PyTorch checkpoint"), std::string::npos);
}
