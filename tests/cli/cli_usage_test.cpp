// SPDX-License-Identifier: Apache-2.0
// Usage errors: an unknown subcommand is named, a missing argument points at the
// subcommand's own --help, and `shard` says which argument is missing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "safetensors/version.h"
#include "support/cli_run.h"

namespace {

using st_test::run_cli;

TEST(CliUsage, UnknownSubcommandIsNamed) {
  auto r = run_cli({"foo"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "safetensors: error: unknown subcommand 'foo' (see 'safetensors --help')\n");
}

TEST(CliUsage, MissingArgumentPointsAtTheSubcommandHelp) {
  auto r = run_cli({"validate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("(see 'safetensors validate --help')"), std::string::npos) << r.err;
  auto bad_flag = run_cli({"dump", "--no-such-flag", "x", "y"});
  EXPECT_EQ(bad_flag.status, 2);
  EXPECT_NE(bad_flag.err.find("(see 'safetensors dump --help')"), std::string::npos) << bad_flag.err;
}

TEST(CliUsage, ShardNamesTheMissingOutputDirectory) {
  auto r = run_cli({"shard", "model.safetensors"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing the output directory after 'model.safetensors'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("safetensors shard --help"), std::string::npos) << r.err;
}

// A count given as "-1" is refused, not read as 2^64 - 1 ("print all 4M values"), and a range
// is not printed as its limits' 309 digits; the check happens before any file is opened.
TEST(CliUsage, NumbersOutOfTheirRangeSayWhatIsExpected) {
  auto limit = run_cli({"dump", "missing.safetensors", "t", "--limit", "-1"});
  EXPECT_EQ(limit.status, 2);
  EXPECT_EQ(limit.err,
            "safetensors: error: --limit: expected a whole number >= 0, got '-1' (see 'safetensors dump --help')\n");
  EXPECT_EQ(run_cli({"dump", "missing.safetensors", "t", "--limit", "1e3"}).status, 2);
  for (const char* bad : {"-1", "0", "soon"}) {
    auto timeout = run_cli({"validate", "--timeout", bad, "http://127.0.0.1:9/x.safetensors"});
    EXPECT_EQ(timeout.status, 2) << bad;
    EXPECT_EQ(timeout.err, std::string("safetensors: error: --timeout: expected a number above 0, got '") + bad +
                               "' (see 'safetensors validate --help')\n");
  }
}

// "-" as an output is not a file named '-' written silently: every writing command refuses it
// before opening anything (checksum reads '-' as standard input; no command writes there).
TEST(CliUsage, DashIsNotAnOutputFile) {
  const std::vector<std::vector<std::string>> commands{
      {"cast", "in.safetensors", "-", "--dtype", "F16"},
      {"extract", "in.safetensors", "-"},
      {"convert", "in.safetensors", "-"},
      {"merge", "in.safetensors", "-"},
      {"quantize", "in.safetensors", "-"},
      {"dequantize", "in.safetensors", "-"},
      {"quantize", "in.safetensors", "q.safetensors", "--config-out", "-"}};
  for (const auto& args : commands) {
    auto r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_NE(r.err.find("'-' (standard output) cannot be written: name a file (./- for a file named '-')"),
              std::string::npos)
        << r.err;
  }
}

TEST(CliUsage, GlobalOptionsStillWork) {
  EXPECT_EQ(run_cli({"--help"}).status, 0);
  auto version = run_cli({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out, std::string("safetensors ") + safetensors::version_string + "\n");  // from CMake
}

}  // namespace
