// SPDX-License-Identifier: Apache-2.0
// Every writing command under the output budget (--max-output-size) and the protected_symlinks
// rule (issue 34, items 4 and 5), walked over writing_commands(): a command added there is
// checked here too.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "support/amplification_fixtures.h"
#include "support/cli_run.h"
#include "support/paths.h"

namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::vector<std::string> with(std::vector<std::string> argv, std::initializer_list<std::string> more) {
  argv.insert(argv.end(), more);
  return argv;
}

TEST(CliOutputBudget, EveryWritingCommandTakesMaxOutputSizeAndRefusesAbove) {
  const fs::path dir = st_test::scratch_dir();
  for (const auto& command : st_test::writing_commands(dir / "inputs")) {
    const fs::path out = dir / "outputs" / command.output_name;
    fs::create_directories(dir / "outputs");
    const auto r = st_test::run_cli(with(command.argv(out.string()), {"--max-output-size", "10"}));
    EXPECT_EQ(r.status, 1) << command.label << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "over the output budget of 10 bytes")) << command.label << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "--max-output-size")) << command.label << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << command.label;
    EXPECT_TRUE(fs::is_empty(dir / "outputs")) << command.label << ": a temporary was left";
    const auto ok = st_test::run_cli(with(command.argv(out.string()), {"--max-output-size", "1GB", "--quiet"}));
    EXPECT_EQ(ok.status, 0) << command.label << ": " << ok.err;
    fs::remove_all(dir / "outputs");
  }
}

TEST(CliOutputBudget, OverlapBombAndAliasingPickleAreRefused) {
  const fs::path dir = st_test::scratch_dir();
  st_test::write_npz_overlap_bomb(dir / "bomb.npz", 1024, 100);
  const auto bomb = st_test::run_cli({"convert", (dir / "bomb.npz").string(), (dir / "out.safetensors").string()});
  EXPECT_EQ(bomb.status, 1) << bomb.err;
  EXPECT_TRUE(contains(bomb.err, "zip members 'a0000.npy' (bytes 0 to ")) << bomb.err;
  EXPECT_FALSE(fs::exists(dir / "out.safetensors"));

  st_test::write_aliasing_checkpoint(dir / "aliases.pt", 1024, 300, false);  // 1,228,800 bytes written out
  const std::vector<std::string> convert{"convert", (dir / "aliases.pt").string(), (dir / "out.safetensors").string()};
  const auto refused = st_test::run_cli(with(convert, {"--max-output-size", "1MB"}));
  EXPECT_EQ(refused.status, 1) << refused.err;
  EXPECT_TRUE(contains(refused.err, "would hold 1228800 bytes of tensor data, over the output budget of 1000000"))
      << refused.err;
  EXPECT_FALSE(fs::exists(dir / "out.safetensors"));
  EXPECT_EQ(st_test::run_cli(with(convert, {"--max-output-size", "2MB", "--quiet"})).status, 0);
  EXPECT_EQ(st_test::run_cli(with(convert, {"--max-output-size", "zero"})).status, 2);
}

// As root, in a sticky world-writable directory: a link owned by `nobody` is not followed
// by any writing command, and the root-owned file it points at is left as it was.
TEST(CliOutputSymlink, NoWritingCommandFollowsAPlantedLink) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting a link owned by another user needs root (lchown)";
  const fs::path dir = st_test::scratch_dir();
  const fs::path sticky = dir / "sticky";
  fs::create_directory(sticky);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  const fs::path victim = dir / "victim";
  st_test::write_bytes(victim, std::vector<std::byte>(4, std::byte{'v'}));
  fs::create_directory(dir / "elsewhere");
  for (const auto& command : st_test::writing_commands(dir / "inputs")) {
    const fs::path link = sticky / "link";
    fs::remove(link);
    if (command.directory_output) {
      fs::create_directory_symlink(dir / "elsewhere", link);
    } else {
      fs::create_symlink(victim, link);
    }
    ASSERT_EQ(::lchown(link.c_str(), 65534, static_cast<gid_t>(-1)), 0);
    const std::string out = link.string() + (command.output_name.ends_with('/') ? "/" : "");
    const auto r = st_test::run_cli(command.argv(out));
    EXPECT_EQ(r.status, 2) << command.label << ": " << r.err;  // IoError, as every unusable output
    EXPECT_TRUE(contains(r.err, "refusing to follow the symlink")) << command.label << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "protected_symlinks")) << command.label << ": " << r.err;
    EXPECT_EQ(st_test::read_text(victim), "vvvv") << command.label;
    EXPECT_TRUE(fs::is_empty(dir / "elsewhere")) << command.label;
    EXPECT_EQ(std::distance(fs::directory_iterator(sticky), fs::directory_iterator()), 1) << command.label;
  }
}

}  // namespace
