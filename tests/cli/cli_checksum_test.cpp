// SPDX-License-Identifier: Apache-2.0
// `safetensors checksum`: equal to sha256sum, per-tensor digests, JSON, errors.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "safetensors/file.h"
#include "safetensors/sha256.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"
#include "support/tensor_values.h"

namespace {

using st_test::sha256_of;

TEST(CliChecksum, WholeFileEqualsSha256sum) {
  const std::string path = (st_test::conformance_dir() / "format" / "002-weights-bf16.safetensors").string();
  auto r = st_test::run_cli({"checksum", path});
  ASSERT_EQ(r.status, 0) << r.err;
  auto reference = st_test::run_command("sha256sum " + st_test::shell_quote(path));
  ASSERT_EQ(reference.status, 0);
  EXPECT_EQ(r.out, reference.out);
  EXPECT_EQ(r.err, "");
}

TEST(CliChecksum, PerTensorDigestsInFileOrder) {
  const std::string path = (st_test::conformance_dir() / "format" / "001-minimal-bf16.safetensors").string();
  auto r = st_test::run_cli({"checksum", "--per-tensor", path});
  ASSERT_EQ(r.status, 0) << r.err;
  auto f = safetensors::file::open(path);
  ASSERT_OK(f);
  std::string expected = sha256_of(st_test::read_bytes(path)) + "  " + path + "\n";
  for (const auto& t : f->tensors()) {
    expected += "tensor " + sha256_of(f->view(t).data) + "  " + std::string(t.name) + "\n";
  }
  EXPECT_EQ(r.out, expected);
}

TEST(CliChecksum, JsonOneObjectPerFile) {
  const auto dir = st_test::conformance_dir() / "format";
  const std::string a = (dir / "001-minimal-bf16.safetensors").string();
  const std::string b = (dir / "042-zero-size-only-tensor.safetensors").string();
  auto r = st_test::run_cli({"checksum", "--json", "--per-tensor", a, b});
  ASSERT_EQ(r.status, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::document_stream stream;
  ASSERT_EQ(parser.parse_many(r.out).get(stream), simdjson::SUCCESS);
  std::vector<std::string> files;
  for (auto doc : stream) {
    simdjson::dom::element e = doc.value();
    files.emplace_back(e["file"].get_string().value());
    EXPECT_EQ(e["sha256"].get_string().value(), sha256_of(st_test::read_bytes(files.back())));
    EXPECT_EQ(e["bytes"].get_uint64().value(), st_test::read_bytes(files.back()).size());
  }
  EXPECT_EQ(files, (std::vector<std::string>{a, b}));
  // The zero-size tensor hashes as the empty message.
  EXPECT_NE(r.out.find("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), std::string::npos);
}

TEST(CliChecksum, ErrorsStillHashTheOtherFiles) {
  const std::string good = (st_test::conformance_dir() / "format" / "001-minimal-bf16.safetensors").string();
  const std::string missing = (st_test::scratch_dir() / "absent").string();
  auto r = st_test::run_cli({"checksum", missing, good});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(good), std::string::npos);
  EXPECT_EQ(r.err.rfind("safetensors: error: " + missing + ": ", 0), 0U) << r.err;
  EXPECT_EQ(r.err.find(missing, missing.size()), std::string::npos) << "path said twice: " << r.err;
}

TEST(CliChecksum, AnyReadableFileIsHashedOnlyPerTensorNeedsAValidOne) {
  const std::string bad = (st_test::conformance_dir() / "format" / "048-hole-between-tensors.safetensors").string();
  auto reference = st_test::run_command("sha256sum " + st_test::shell_quote(bad));
  auto whole = st_test::run_cli({"checksum", bad});
  EXPECT_EQ(whole.status, 0) << whole.err;
  EXPECT_EQ(whole.out, reference.out);
  // --per-tensor cannot split an invalid file, but still prints the whole-file digest.
  auto per = st_test::run_cli({"checksum", "--per-tensor", bad});
  EXPECT_EQ(per.status, 1);
  EXPECT_EQ(per.out, reference.out);
  EXPECT_NE(per.err.find("safetensors: error: "), std::string::npos);
  // A partial download: the first 100 bytes of a valid file.
  const auto dir = st_test::scratch_dir();
  auto bytes = st_test::read_bytes(st_test::conformance_dir() / "format" / "002-weights-bf16.safetensors");
  bytes.resize(100);
  st_test::write_bytes(dir / "part.safetensors", bytes);
  auto part = st_test::run_cli({"checksum", (dir / "part.safetensors").string()});
  EXPECT_EQ(part.status, 0) << part.err;
  EXPECT_EQ(part.out.substr(0, 64), sha256_of(bytes));
}

TEST(CliChecksum, DashReadsStandardInput) {
  const std::string path = (st_test::conformance_dir() / "format" / "002-weights-bf16.safetensors").string();
  const std::string cli = st_test::shell_quote(st_test::cli_path());
  auto piped = st_test::run_command("cat " + st_test::shell_quote(path) + " | " + cli + " checksum -");
  ASSERT_EQ(piped.status, 0);
  EXPECT_EQ(piped.out, sha256_of(st_test::read_bytes(path)) + "  -\n");
  auto per = st_test::run_command(cli + " checksum --per-tensor - < /dev/null 2>&1");
  EXPECT_EQ(per.status, 2);
  EXPECT_NE(per.out.find("standard input cannot be read by offset"), std::string::npos) << per.out;
}

TEST(CliChecksum, CheckVerifiesFilesAndTensorsAndReadsSha256sumLists) {
  const auto dir = st_test::scratch_dir();
  const auto model = dir / "m.safetensors";
  st_test::make_f32_file(model, {{"a", {4}, {1, 2, 3, 4}}, {"b", {2}, {5, 6}}});
  const std::string cli = st_test::shell_quote(st_test::cli_path());
  const std::string in_dir = "cd " + st_test::shell_quote(dir.string()) + " && ";
  ASSERT_EQ(st_test::run_command(in_dir + cli + " checksum --per-tensor m.safetensors > list").status, 0);
  auto ok = st_test::run_command(in_dir + cli + " checksum --check list");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_EQ(ok.out, "m.safetensors: OK\nm.safetensors: tensor 'a': OK\nm.safetensors: tensor 'b': OK\n");
  // sha256sum -c reads our file lines and skips the tensor lines instead of failing on them.
  auto coreutils = st_test::run_command(in_dir + "sha256sum -c list 2>/dev/null");
  EXPECT_EQ(coreutils.status, 0) << coreutils.out;
  EXPECT_EQ(coreutils.out, "m.safetensors: OK\n");
  // A changed value in tensor b: the file and b fail, a still matches.
  auto bytes = st_test::read_bytes(model);
  bytes.back() ^= std::byte{1};
  st_test::write_bytes(model, bytes);
  auto bad = st_test::run_command(in_dir + cli + " checksum --check list 2>&1");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.out.find("m.safetensors: FAILED\n"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("tensor 'a': OK"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("tensor 'b': FAILED"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("2 of 3 computed checksums did NOT match"), std::string::npos) << bad.out;
  // A list written by sha256sum.
  ASSERT_EQ(st_test::run_command(in_dir + "sha256sum m.safetensors > list2").status, 0);
  auto theirs = st_test::run_command(in_dir + cli + " checksum -c list2");
  EXPECT_EQ(theirs.status, 0);
  EXPECT_EQ(theirs.out, "m.safetensors: OK\n");
  // A missing file is an I/O problem (exit 2).
  std::filesystem::remove(model);
  EXPECT_EQ(st_test::run_command(in_dir + cli + " checksum -c list2 2>/dev/null").status, 2);
}

TEST(CliChecksum, CheckpointDirectoryHashesEveryShard) {
  const auto dir = st_test::scratch_dir();
  st_test::make_f32_file(dir / "in.safetensors",
                         {{"a", {64}, std::vector<float>(64, 1.0F)}, {"b", {64}, std::vector<float>(64, 2.0F)}});
  ASSERT_EQ(
      st_test::run_cli({"shard", (dir / "in.safetensors").string(), (dir / "out").string(), "--max-shard-size", "300"})
          .status,
      0);
  auto r = st_test::run_cli({"checksum", (dir / "out").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
    const auto path = (dir / "out" / shard).string();
    EXPECT_NE(r.out.find(sha256_of(st_test::read_bytes(path)) + "  " + path + "\n"), std::string::npos) << r.out;
  }
}

}  // namespace
