// SPDX-License-Identifier: Apache-2.0
// The progress bar appears only on a terminal (a pseudo-terminal from script(1) here),
// goes to stderr, is erased at the end, and --quiet turns it off.
#include <gtest/gtest.h>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

bool have_script() { return st_test::run_command("command -v script >/dev/null 2>&1").status == 0; }

std::string under_pty(const std::string& command) {
  return st_test::run_command("script -qec " + st_test::shell_quote(command) + " /dev/null").out;
}

TEST(CliProgress, ShownOnATerminalOnlyAndSilencedByQuiet) {
  if (!have_script()) GTEST_SKIP() << "script(1) not installed";
  const auto path = st_test::scratch_dir() / "p.safetensors";
  st_test::make_f32_file(path, {{"w", {4}, {1, 2, 3, 4}}});
  const std::string cli = st_test::shell_quote(st_test::cli_path());
  const std::string file = st_test::shell_quote(path.string());

  const std::string shown = under_pty(cli + " checksum " + file);
  EXPECT_NE(shown.find("checksum ["), std::string::npos) << shown;
  EXPECT_NE(shown.find("\r\x1b[K"), std::string::npos) << "the bar is erased when done";

  const std::string quiet = under_pty(cli + " checksum --quiet " + file);
  EXPECT_EQ(quiet.find("checksum ["), std::string::npos) << quiet;

  // stdout a terminal but stderr not: no bar (it belongs to stderr).
  const std::string redirected = under_pty(cli + " checksum " + file + " 2>/dev/null");
  EXPECT_EQ(redirected.find("checksum ["), std::string::npos) << redirected;
  // Not a terminal at all: silent, as every other CLI test checks through empty stderr.
  auto plain = st_test::run_cli({"checksum", path.string()});
  EXPECT_EQ(plain.err, "");
}

// The long commands share the one bar (tools/cli/progress.h): "LABEL [###...]", and -q.
TEST(CliProgress, EveryLongCommandHasTheBarAndQuiet) {
  if (!have_script()) GTEST_SKIP() << "script(1) not installed";
  const auto dir = st_test::scratch_dir();
  std::vector<float> w(4 * 64, 0.25F);
  const auto model = dir / "model.safetensors";
  st_test::make_f32_file(model, {{"l0.weight", {4, 64}, w}, {"l1.weight", {4, 64}, w}});
  const std::string cli = st_test::shell_quote(st_test::cli_path());
  const auto q = [](const std::filesystem::path& p) { return st_test::shell_quote(p.string()); };
  struct step {
    std::string label;
    std::string args;
  };
  const std::vector<step> steps{
      {"quantize", "quantize " + q(model) + " " + q(dir / "q.safetensors")},
      {"dequantize", "dequantize " + q(dir / "q.safetensors") + " " + q(dir / "dq.safetensors")},
      {"shard", "shard " + q(model) + " " + q(dir / "ck") + " --max-shard-size 1100"},
      {"merge", "merge " + q(dir / "ck") + " " + q(dir / "merged.safetensors")},
      {"sha256", "verify --checksums " + q(dir / "ck")},
  };
  for (const auto& s : steps) {
    // The bar is "LABEL [####....]  42% ..." and is erased with "\r\x1b[K" when done.
    const std::string shown = under_pty(cli + " " + s.args);
    const auto at = shown.find(s.label);
    EXPECT_NE(at, std::string::npos) << s.args << ": " << shown;
    EXPECT_NE(shown.find("]", at), std::string::npos) << s.args << ": " << shown;
    EXPECT_NE(shown.find("\r\x1b[K"), std::string::npos) << s.args << ": " << shown;
    const std::string quiet = under_pty(cli + " " + s.args + " -q");
    EXPECT_EQ(quiet.find("\x1b[K"), std::string::npos) << s.args << " -q: " << quiet;
  }
}

}  // namespace
