// SPDX-License-Identifier: Apache-2.0
// Usage errors: an unknown subcommand is named, a missing argument points at the
// subcommand's own --help, and `shard` says which argument is missing.
#include <gtest/gtest.h>

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

TEST(CliUsage, GlobalOptionsStillWork) {
  EXPECT_EQ(run_cli({"--help"}).status, 0);
  auto version = run_cli({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out, std::string("safetensors ") + safetensors::version_string + "\n");  // from CMake
}

}  // namespace
