// SPDX-License-Identifier: Apache-2.0
// torch::checkpoint over the fixtures of scripts/fixtures/make_pytorch_fixtures.py: every
// tensor's bytes equal PyTorch's (SHA-256 recorded at generation time), and every
// malicious file is refused with a specific error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "safetensors/formats/pytorch.h"
#include "safetensors/sha256.h"
#include "support/fault_injector.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"
#include "support/status_matchers.h"

namespace st = safetensors;

namespace {

using st_test::pytorch_expected;
using st_test::shape_text;

std::filesystem::path fixture(const std::string& name) { return st_test::pytorch_fixture(name); }

std::string tensor_sha256(const st::torch::checkpoint& ckpt, std::size_t index, std::size_t chunk = 7) {
  auto hash = st::sha256_hasher::create();
  EXPECT_OK(hash);
  auto ok = ckpt.read_tensor(
      index,
      [&](std::span<const std::byte> bytes) -> st::status {
        hash->update(bytes);
        return {};
      },
      chunk);
  EXPECT_OK(ok);
  return st::to_hex(hash->finish());
}

// Opens `name` and compares every tensor and skipped entry with expected.tsv.
void expect_matches_pytorch(const std::string& name, const std::string& expected_name = "") {
  const auto& want = pytorch_expected().tensors.at(expected_name.empty() ? name : expected_name);
  auto ckpt = st::torch::checkpoint::open(fixture(name).string());
  ASSERT_OK(ckpt);
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
  auto ckpt = st::torch::checkpoint::open(fixture(name).string());
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
  auto ckpt = st::torch::checkpoint::open(fixture("tied.pt").string());
  ASSERT_OK(ckpt);
  auto groups = st::torch::shared_storage_groups(ckpt->tensors());
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].size(), 3u);
  const auto& t = ckpt->tensors();
  EXPECT_EQ(t[groups[0][0]].name, "embed.weight");
  EXPECT_TRUE(st::torch::same_view(t[groups[0][0]], t[groups[0][2]]));   // embed.weight, lm_head.weight
  EXPECT_FALSE(st::torch::same_view(t[groups[0][0]], t[groups[0][1]]));  // first_row is a slice
}
TEST(PytorchCheckpoint, OrderedDictStateDictAndParameters) {
  expect_matches_pytorch("ordered.pt");
  expect_matches_pytorch("parameters.pt");
}
TEST(PytorchCheckpoint, NestedDictsFlattenAndNonTensorsAreSkipped) {
  expect_matches_pytorch("nested.pt");
  auto ckpt = st::torch::checkpoint::open(fixture("nested.pt").string());
  ASSERT_OK(ckpt);
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
  st::torch::open_options options;
  options.key = "state_dict";
  auto ckpt = st::torch::checkpoint::open(fixture("nested.pt").string(), options);
  ASSERT_OK(ckpt);
  ASSERT_EQ(ckpt->tensors().size(), 3u);
  EXPECT_EQ(ckpt->tensors()[0].name, "encoder.w");
  EXPECT_TRUE(ckpt->skipped().empty());
  options.key = "state_dict.encoder";
  ckpt = st::torch::checkpoint::open(fixture("nested.pt").string(), options);
  ASSERT_OK(ckpt);
  EXPECT_EQ(ckpt->tensors().size(), 2u);
  options.key = "model";
  ckpt = st::torch::checkpoint::open(fixture("nested.pt").string(), options);
  ASSERT_ERROR(ckpt, st::error_code::invalid_argument);
  EXPECT_NE(ckpt.err().message.find("top-level keys: state_dict, epoch"), std::string::npos) << ckpt.err().message;
}
TEST(PytorchCheckpoint, LegacyFormatIsRead) {
  expect_matches_pytorch("legacy.pt");
  expect_matches_pytorch("legacy_tied.pt");
  auto ckpt = st::torch::checkpoint::open(fixture("legacy.pt").string());
  ASSERT_OK(ckpt);
  EXPECT_EQ(ckpt->container(), st::torch::container_kind::legacy);
}
TEST(PytorchCheckpoint, BigEndianStoragesAreSwapped) {
  auto ckpt = st::torch::checkpoint::open(fixture("bigendian.pt").string());
  ASSERT_OK(ckpt);
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
      // A global on the code-execution list, named anywhere: the file tries to run code.
      {"evil_os_system.pt", st::error_code::code_execution,
       "refused: this file tries to run code: os.system at byte 2 of archive/data.pkl"},
      {"evil_eval_stack_global.pt", st::error_code::code_execution, "tries to run code: builtins.eval at byte "},
      {"evil_popen.pt", st::error_code::code_execution, "tries to run code: subprocess.Popen at byte "},
      {"evil_reduce_nonfunction.pt", st::error_code::unsafe_content, "REDUCE at pickle byte"},
      {"evil_inst.pt", st::error_code::code_execution, "tries to run code: os.system at byte "},
      {"evil_obj.pt", st::error_code::code_execution, "tries to run code: os.system at byte 3 of archive/data.pkl"},
      {"evil_newobj.pt", st::error_code::code_execution, "tries to run code: subprocess.Popen at byte "},
      {"evil_beside_tensor.pt", st::error_code::code_execution, "tries to run code: posix.system at byte "},
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
  // The zip bomb (256 MiB of zeros in one deflated storage) is refused before inflating.
  auto bomb = open_error("bomb_zip.pt");
  EXPECT_EQ(bomb.code, st::error_code::limit_exceeded) << bomb.to_string();
  EXPECT_NE(bomb.message.find("archive/data/0"), std::string::npos) << bomb.to_string();
}

// An interrupted download: the central directory at the end is gone, and the local
// headers say how long the archive should be.
TEST(PytorchCheckpoint, TruncatedZipSaysTruncatedAndHowLong) {
  const auto whole = st_test::read_bytes(fixture("basic.pt"));
  const auto dir = st_test::scratch_dir();
  for (std::size_t keep : {whole.size() / 2, whole.size() - 30, std::size_t{100}, std::size_t{1100}}) {
    const auto path = dir / ("cut" + std::to_string(keep) + ".pt");
    st_test::write_bytes(path,
                         std::vector<std::byte>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(keep)));
    auto c = st::torch::checkpoint::open(path.string());
    ASSERT_ERROR(c, st::error_code::invalid_format) << keep;
    EXPECT_NE(c.err().message.find("truncated"), std::string::npos) << c.err().message;
    EXPECT_EQ(c.err().message.find("not a zip archive"), std::string::npos) << c.err().message;
  }
  // torch writes each record's size after its data (a data descriptor): when the file ends
  // in the middle of a record, the message names it.
  for (std::size_t keep : {whole.size() / 2, std::size_t{1100}}) {
    auto c = st::torch::checkpoint::open((dir / ("cut" + std::to_string(keep) + ".pt")).string());
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.err().message.find("truncated zip archive: the file has " + std::to_string(keep) + " bytes"),
              std::string::npos)
        << c.err().message;
  }
  auto inside = st::torch::checkpoint::open((dir / "cut100.pt").string());
  EXPECT_NE(inside.err().message.find("ends inside member 1 'basic/data.pkl'"), std::string::npos)
      << inside.err().message;
  // With sizes in the local headers (Python's zipfile), the expected size is known.
  const auto sized = st_test::read_bytes(fixture("float8.pt"));
  const auto cut = dir / "float8_cut.pt";
  st_test::write_bytes(cut, std::vector<std::byte>(sized.begin(), sized.begin() + 150));
  auto known = st::torch::checkpoint::open(cut.string());
  ASSERT_FALSE(known.ok());
  EXPECT_NE(known.err().message.find("the file has 150 bytes, its records need at least 390"), std::string::npos)
      << known.err().message;
}

// torch.load reads pickle protocols 1-5 in both containers; so must we.
TEST(PytorchCheckpoint, EveryPickleProtocolInBothContainers) {
  for (int protocol = 1; protocol <= 5; ++protocol) {
    for (const char* container : {"zip", "legacy"}) {
      const std::string name = "protocol" + std::to_string(protocol) + "_" + container + ".pt";
      SCOPED_TRACE(name);
      expect_matches_pytorch(name);
      auto c = st::torch::checkpoint::open(fixture(name).string());
      ASSERT_OK(c);
      EXPECT_EQ(c->container(),
                std::string(container) == "zip" ? st::torch::container_kind::zip : st::torch::container_kind::legacy);
    }
  }
}

st::torch::skip_kind skip_kind(const st::torch::checkpoint& c, const std::string& name) {
  for (const auto& s : c.skipped()) {
    if (s.name == name) return s.kind;
  }
  ADD_FAILURE() << name << " not skipped";
  return st::torch::skip_kind::not_tensor;
}

// Namespace, numpy scalars and paths beside the tensors: skipped, never loaded.
TEST(PytorchCheckpoint, ObjectsOutsideTheAllowlistAreSkipped) {
  for (const char* name : {"opaque.pt", "opaque_legacy.pt"}) expect_matches_pytorch(name);
  auto c = st::torch::checkpoint::open(fixture("opaque.pt").string());
  ASSERT_OK(c);
  for (const char* opaque : {"args", "np_step", "np_count", "path", "history"}) {
    EXPECT_EQ(skip_kind(*c, opaque), st::torch::skip_kind::opaque_object) << opaque;
  }
  EXPECT_EQ(skip_kind(*c, "epoch"), st::torch::skip_kind::not_tensor);
  for (const auto& s : c->skipped()) {
    if (s.name == "args") {
      EXPECT_NE(s.reason.find("argparse.Namespace"), std::string::npos) << s.reason;
    }
    if (s.name == "history") {
      EXPECT_NE(s.reason.find("contains an object"), std::string::npos) << s.reason;
    }
  }
  st::torch::open_options strict;
  strict.strict = true;
  auto refused = st::torch::checkpoint::open(fixture("opaque.pt").string(), strict);
  ASSERT_ERROR(refused, st::error_code::unsafe_content);
  EXPECT_NE(refused.err().message.find("--strict: opaque/data.pkl names a global outside the allowlist"),
            std::string::npos)
      << refused.err().message;
  strict.key = "model";  // what weights_only refuses, wherever it is: the key does not matter
  ASSERT_ERROR(st::torch::checkpoint::open(fixture("opaque.pt").string(), strict), st::error_code::unsafe_content);
}

TEST(PytorchCheckpoint, UnconvertibleTensorsAreSkippedNamingThem) {
  expect_matches_pytorch("unsupported_tensors.pt");
  auto c = st::torch::checkpoint::open(fixture("unsupported_tensors.pt").string());
  ASSERT_OK(c);
  const std::map<std::string, std::string> why = {
      {"quantized", "quantized"}, {"sparse", "sparse"}, {"complex128", "ComplexDouble"}};
  for (const auto& s : c->skipped()) {
    EXPECT_EQ(s.kind, st::torch::skip_kind::unsupported_tensor) << s.name;
    ASSERT_TRUE(why.contains(s.name)) << s.name;
    EXPECT_NE(s.reason.find(why.at(s.name)), std::string::npos) << s.name << ": " << s.reason;
  }
  st::torch::open_options strict;
  strict.strict = true;
  auto refused = st::torch::checkpoint::open(fixture("unsupported_tensors.pt").string(), strict);
  ASSERT_ERROR(refused, st::error_code::unsupported);
  EXPECT_TRUE(refused.err().tensor == "quantized" || refused.err().tensor == "sparse" ||
              refused.err().tensor == "complex128")
      << refused.err().to_string();
}

TEST(PytorchCheckpoint, KeyEdgeCasesAreInvalidArgumentsSayingWhatTheKeyNames) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"missing", "no entry 'missing' in the checkpoint (top-level keys: state_dict"},
      {"state_dict.nope", "no entry 'state_dict.nope' in the checkpoint ('state_dict' has no 'nope')"},
      {"state_dict.head", "--key 'state_dict.head' names a tensor (F32 [2, 2]), not a dict of tensors"},
      {"state_dict.head.x", "'state_dict.head' is a tensor (F32 [2, 2]), not a dict with an entry 'x'"},
      {"epoch", "names an int"},
      {"history", "names a list"},
  };
  for (const auto& [key, says] : cases) {
    st::torch::open_options options;
    options.key = key;
    auto c = st::torch::checkpoint::open(fixture("nested.pt").string(), options);
    ASSERT_ERROR(c, st::error_code::invalid_argument) << key;
    EXPECT_NE(c.err().message.find(says), std::string::npos) << key << ": " << c.err().message;
  }
  st::torch::open_options config;
  config.key = "config";  // {"hidden": 4, "act": "gelu"}
  auto empty = st::torch::checkpoint::open(fixture("opaque.pt").string(), config);
  ASSERT_ERROR(empty, st::error_code::invalid_argument);
  EXPECT_NE(empty.err().message.find("--key 'config' names a dict that holds no tensor (skipped: hidden, act)"),
            std::string::npos)
      << empty.err().message;
}

TEST(PytorchCheckpoint, NotACheckpoint) {
  auto e = open_error("expected.tsv");
  EXPECT_EQ(e.code, st::error_code::invalid_format);
  EXPECT_NE(e.message.find("not a PyTorch checkpoint"), std::string::npos);
}

// A zip checkpoint is read by its records, never mapped whole: the browser's inspector reads a
// checkpoint of many GB by ranges (web/site/inspector.mjs), where a mapping would need all of it.
TEST(PytorchCheckpoint, ZipIsNotMappedWhole) {
  const st_test::fault_injector calls;
  auto zip = st::torch::checkpoint::open(fixture("basic.pt").string());
  ASSERT_OK(zip);
  EXPECT_EQ(calls.calls(st_test::sys_call::mmap), 0U);
  auto legacy = st::torch::checkpoint::open(fixture("legacy.pt").string());
  ASSERT_OK(legacy);
  EXPECT_EQ(calls.calls(st_test::sys_call::mmap), 1U);  // the legacy format: mapped while its pickles are read
}
