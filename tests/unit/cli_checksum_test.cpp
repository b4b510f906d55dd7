// SPDX-License-Identifier: Apache-2.0
// `safetensors checksum`: equal to sha256sum, per-tensor digests, JSON, errors.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "safetensors/file.h"
#include "safetensors/sha256.h"
#include "support/cli_run.h"
#include "support/paths.h"

namespace {

std::string sha256_of(std::span<const std::byte> bytes) {
  auto h = safetensors::sha256_hasher::create();
  h->update(bytes);
  return safetensors::to_hex(h->finish());
}

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
  ASSERT_TRUE(f.ok());
  std::string expected = sha256_of(st_test::read_bytes(path)) + "  " + path + "\n";
  for (const auto& t : f->tensors()) {
    expected += sha256_of(f->view(t).data) + "  " + path + ":" + std::string(t.name) + "\n";
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
  auto bad = st_test::run_cli(
      {"checksum", (st_test::conformance_dir() / "format" / "048-hole-between-tensors.safetensors").string()});
  EXPECT_EQ(bad.status, 1);
}

}  // namespace
