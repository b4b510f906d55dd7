// SPDX-License-Identifier: Apache-2.0
// The CLI on pickles that try to run code (issue 34): `convert` refuses every file of the
// hostile corpus (tests/fixtures/pytorch/hostile) with exit status 3, with and without
// --strict and --key, and nothing runs; `inspect` shows the pickle's verdict, in --json too;
// inert objects (Namespace, PosixPath, numpy scalars) convert, and --strict refuses them
// whatever --key selects.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "support/cli_run.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"

namespace fs = std::filesystem;

TEST(CliPickleVerdict, EveryFileThatTriesToRunCodeIsRefusedWithExitThree) {
  fs::remove(st_test::hostile_payload_sentinel);
  const auto files = st_test::hostile_pickle_files();
  ASSERT_GE(files.size(), 50u);
  const auto dir = st_test::scratch_dir();
  for (const auto& [file, first] : files) {
    const std::string in = st_test::pytorch_fixture("hostile/" + file).string();
    const auto out = dir / (file + ".safetensors");
    std::vector<std::vector<std::string>> runs = {{"convert", in, out.string()},
                                                  {"convert", in, out.string(), "--strict"}};
    if (file.find("checkpoint_args") != std::string::npos) {
      runs.push_back({"convert", in, out.string(), "--strict", "--key", "model.state_dict"});
      runs.push_back({"convert", in, out.string(), "--key", "model.state_dict"});
    }
    for (const auto& args : runs) {
      auto r = st_test::run_cli(args);
      EXPECT_EQ(r.status, 3) << file << ": " << r.err;
      EXPECT_NE(
          r.err.find("safetensors: error: " + in + ": refused: this file tries to run code: " + first + " at byte "),
          std::string::npos)
          << file << ": " << r.err;
      EXPECT_EQ(r.err.find("warning"), std::string::npos) << file << ": " << r.err;
      EXPECT_FALSE(fs::exists(out)) << file;
    }
    auto r = st_test::run_cli({"inspect", in});
    EXPECT_EQ(r.status, 3) << file << ": " << r.err;
    EXPECT_NE(r.out.find("pickle verdict: refused: this file tries to run code"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("runs code: " + first + ": named "), std::string::npos) << file << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(st_test::hostile_payload_sentinel)) << "a payload ran";
}

TEST(CliPickleVerdict, InspectJsonGivesTheVerdictOfARefusedFile) {
  const std::string in = st_test::pytorch_fixture("hostile/hand_popped_zip.pt").string();
  auto r = st_test::run_cli({"inspect", "--json", in});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.out.find(R"({"format":"pytorch","verdict":{"kind":"runs code","globals":[{"name":"posix.system",)"
                       R"("runs_code":true,"pickle":"archive/data.pkl","offset":2,"opcode":"GLOBAL","times_named":1,)"
                       R"("calls":1,"first_call":"REDUCE","first_call_offset":)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("refused: this file tries to run code: posix.system at byte 2 of archive/data.pkl"),
            std::string::npos)
      << r.err;
}

TEST(CliPickleVerdict, InertObjectsConvertByDefaultAndStrictRefusesThemWhateverTheKey) {
  const auto dir = st_test::scratch_dir();
  const std::string opaque = st_test::pytorch_fixture("opaque.pt").string();
  auto r = st_test::run_cli({"inspect", opaque});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("note:        pickle verdict: 4 globals outside the allowlist, never loaded"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note:        argparse.Namespace: named GLOBAL at byte 253 of "), std::string::npos) << r.out;
  r = st_test::run_cli({"inspect", "--json", opaque});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(R"("verdict":{"kind":"inert objects","globals":[{"name":"argparse.Namespace",)"),
            std::string::npos)
      << r.out;
  r = st_test::run_cli({"inspect", "--json", st_test::pytorch_fixture("basic.pt").string()});
  EXPECT_NE(r.out.find(R"("verdict":{"kind":"allowlisted","globals":[]})"), std::string::npos) << r.out;

  for (const char* file : {"opaque.pt", "opaque_legacy.pt", "hostile/inert_popped_zip.pt",
                           "hostile/inert_overwritten_zip.pt", "hostile/inert_dict_key_zip.pt",
                           "hostile/inert_requires_grad_zip.pt", "hostile/inert_build_on_tensor_zip.pt"}) {
    const std::string in = st_test::pytorch_fixture(file).string();
    r = st_test::run_cli({"convert", in, (dir / "ok.safetensors").string(), "-q"});
    EXPECT_EQ(r.status, 0) << file << ": " << r.err;
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--strict"}, std::vector<std::string>{"--strict", "--key", "model"}}) {
      std::vector<std::string> args = {"convert", in, (dir / "strict.safetensors").string()};
      args.insert(args.end(), extra.begin(), extra.end());
      r = st_test::run_cli(args);
      EXPECT_EQ(r.status, 1) << file << ": " << r.err;
      EXPECT_NE(r.err.find("names a global outside the allowlist: argparse.Namespace at byte "), std::string::npos)
          << file << ": " << r.err;
      EXPECT_FALSE(fs::exists(dir / "strict.safetensors")) << file;
    }
  }
}
