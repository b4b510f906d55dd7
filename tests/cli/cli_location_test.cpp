// SPDX-License-Identifier: Apache-2.0
// What an input names is the library's decision (location.h), the same for every subcommand:
// a file:// URL is a local file (percent-decoded), a URL of a scheme nothing reads is refused
// as such rather than looked up as a file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

using st_test::run_cli;

TEST(CliLocation, AFileUrlIsItsLocalFileForEveryReader) {
  const auto dir = st_test::scratch_dir();
  const auto model = dir / "a model.safetensors";
  ASSERT_EQ(run_cli({"convert", SAFETENSORS_SOURCE_DIR "/tests/fixtures/numpy/dtype_f4.npy", model.string()}).status,
            0);
  const std::string url = "file://" + dir.string() + "/a%20model.safetensors";
  for (const char* command : {"validate", "ls", "inspect", "checksum"}) {
    const auto r = run_cli({command, url});
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  }
  const auto dir_url = run_cli({"ls", "file://" + dir.string() + "/"});  // a directory: a checkpoint
  EXPECT_EQ(dir_url.status, 0) << dir_url.err;
}

TEST(CliLocation, WritingCommandsTakeUrlsAsInputsThroughTheSameDoor) {
  // convert, merge and cast hand their inputs to the pipeline, which resolves each through the
  // location door: file:// URLs (a file, and a checkpoint directory) are read like their paths.
  const auto dir = st_test::scratch_dir();
  const auto model = dir / "one model.safetensors";
  ASSERT_EQ(run_cli({"convert", SAFETENSORS_SOURCE_DIR "/tests/fixtures/numpy/dtype_f4.npy", model.string()}).status,
            0);
  const std::string url = "file://" + dir.string() + "/one%20model.safetensors";
  const auto npz = run_cli({"convert", url, (dir / "out.npz").string()});
  EXPECT_EQ(npz.status, 0) << npz.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out.npz"));
  const auto cast = run_cli({"cast", url, (dir / "half.safetensors").string(), "--dtype", "F16"});
  EXPECT_EQ(cast.status, 0) << cast.err;
  const auto sharded = dir / "sharded";
  ASSERT_EQ(run_cli({"shard", model.string(), sharded.string(), "--max-shard-size", "1KB"}).status, 0);
  const auto merged = run_cli({"convert", "file://" + sharded.string() + "/", (dir / "merged.safetensors").string()});
  EXPECT_EQ(merged.status, 0) << merged.err;
  const auto refused = run_cli({"convert", "s3://bucket/model.safetensors", (dir / "never.npz").string()});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("this program reads no s3:// URLs"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "never.npz"));
}

TEST(CliLocation, AUrlOfASchemeNothingReadsIsRefusedAsSuch) {
  const auto r = run_cli({"validate", "s3://bucket/model.safetensors"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("s3://bucket/model.safetensors: Unsupported: this program reads no s3:// URLs"),
            std::string::npos)
      << r.out << r.err;
  const auto ls = run_cli({"ls", "s3://bucket/model.safetensors"});
  EXPECT_EQ(ls.status, 1);
  EXPECT_NE(ls.err.find("this program reads no s3:// URLs"), std::string::npos) << ls.err;
}

}  // namespace
