// SPDX-License-Identifier: Apache-2.0
// A sharded write that fails (here: every file write past 64 bytes fails with EFBIG, as a
// full disk fails with ENOSPC) removes the output directories it created, and only those:
// a directory that was there before stays, with what it held.
#include <gtest/gtest.h>

#include <fstream>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

namespace fs = std::filesystem;

st_test::cli_child failing_writes() {
  st_test::cli_child child;
  child.max_file_bytes = 64;
  return child;
}

TEST(CliOutputCleanup, FailedShardedWriteRemovesTheDirectoriesItCreated) {
  const fs::path dir = st_test::scratch_dir();
  const auto commands = st_test::writing_commands(dir / "in");
  int directory_outputs = 0;
  int n = 0;
  for (const auto& c : commands) {
    if (!c.directory_output) continue;
    ++directory_outputs;
    // New: the output directory and two parents above it.
    const fs::path root = dir / ("new-" + std::to_string(n++));
    const std::string out = (root / "a" / "b" / c.output_name).string();
    auto r = st_test::run_cli(c.argv(out), failing_writes());
    EXPECT_EQ(r.status, 2) << c.label << ": " << r.err;
    EXPECT_NE(r.err.find("File too large"), std::string::npos) << c.label << ": " << r.err;
    EXPECT_FALSE(fs::exists(root)) << c.label << " left " << root;

    // Existing: the directory stays, and so does what was in it; no temporary is left.
    const fs::path existing = dir / ("old-" + std::to_string(n++));
    fs::create_directories(existing);
    { std::ofstream(existing / "keep.txt") << "mine"; }
    r = st_test::run_cli(c.argv(existing.string()), failing_writes());
    EXPECT_EQ(r.status, 2) << c.label << ": " << r.err;
    EXPECT_EQ(st_test::run_command("ls -A " + st_test::shell_quote(existing.string())).out, "keep.txt\n") << c.label;

    // Without the fault the same command succeeds (the fault is what failed it).
    r = st_test::run_cli(c.argv((dir / ("ok-" + std::to_string(n++)) / c.output_name).string()));
    EXPECT_EQ(r.status, 0) << c.label << ": " << r.err;
  }
  EXPECT_GE(directory_outputs, 5);
}

}  // namespace
