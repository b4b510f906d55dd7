// SPDX-License-Identifier: Apache-2.0
// A command that fails returns its error and `main` prints it: exactly one
// "safetensors: error:" line on stderr, with the exit status of its code (2 usage and
// I/O, 1 a file that failed a check). Findings of a command that ran to the end
// (validate's and verify's problem lines) are its output, not errors.
#include <gtest/gtest.h>

#include <fstream>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

namespace fs = std::filesystem;
using st_test::run_cli;

std::size_t error_lines(const std::string& text) {
  std::size_t n = 0;
  for (std::size_t at = text.find("safetensors: error: "); at != std::string::npos;
       at = text.find("safetensors: error: ", at + 1)) {
    if (at == 0 || text[at - 1] == '\n') ++n;
  }
  return n;
}

fs::path good_file(const fs::path& dir) {
  const fs::path path = dir / "in.safetensors";
  st_test::make_f32_file(path, {{"w", {2}, {1, 2}}});
  return path;
}

TEST(CliErrorReport, EveryReaderPrintsABadInputOnce) {
  const auto dir = st_test::scratch_dir();
  const fs::path text = dir / "notes.txt";
  std::ofstream(text, std::ios::binary) << "hello world, this is plain text\n";
  const std::string p = text.string();
  for (const auto& args : st_test::reading_commands(text, false)) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 1) << args.front() << ": " << r.err;
    EXPECT_EQ(error_lines(r.err), 1U) << args.front() << ": " << r.err;
    EXPECT_EQ(error_lines(r.out), 0U) << args.front() << ": " << r.out;
  }
  // validate and verify report the file as a finding on stdout and exit 1; nothing is an error.
  for (const std::string command : {"validate", "verify"}) {
    const auto r = run_cli({command, p});
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_EQ(error_lines(r.out + r.err), 0U) << command << ": " << r.out << r.err;
    EXPECT_NE(r.out.find(p + ": "), std::string::npos) << command << ": " << r.out;
  }
}

TEST(CliErrorReport, FailuresThatAreNotTheInputsArePrintedOnceWithTheirExitStatus) {
  const auto dir = st_test::scratch_dir();
  const std::string in = good_file(dir).string();
  const std::string missing_dir = (dir / "no-such-dir" / "out.safetensors").string();
  struct failure {
    std::vector<std::string> args;
    int status;
    std::string err;  ///< the whole of stderr
  };
  const std::vector<failure> failures = {
      {{"cast", in, (dir / "c.safetensors").string(), "--dtype", "I32"},
       2,
       "safetensors: error: --dtype 'I32': expected a floating-point dtype (F64, F32, BF16, F16, F8_E5M2FNUZ, F8_E4M"
       "3FNUZ, F8_E8M0, F8_E4M3, F8_E5M2, F6_E3M2, F6_E2M3, F4)\n"},
      {{"diff", in, in, "--rtol", "-1"}, 2, "safetensors: error: --rtol and --atol must be numbers >= 0\n"},
      {{"inspect", "--tree", "--depth", "-2", in}, 2, "safetensors: error: --depth must be >= 0\n"},
      {{"quantize", in, (dir / "q.safetensors").string(), "--mode", "int3"},
       2,
       "safetensors: error: unknown --mode 'int3': use affine, mxfp4, mxfp8 or nvfp4\n"},
      {{"convert", in, (dir / "out.txt").string()},
       2,
       "safetensors: error: " + (dir / "out.txt").string() +
           ": cannot tell the output format from the name: end it in .safetensors, .npz, .npy or .gguf, or give the "
           "format (safetensors, npz, npy or gguf)\n"},
      {{"dump", in, "absent"}, 2, "safetensors: error: " + in + ": tensor 'absent' not found\n"},
      {{"extract", in, missing_dir}, 2, ""},  // an I/O error naming the output; its text is the OS's
      {{"shard", in}, 2, ""},
  };
  for (const auto& f : failures) {
    const auto r = run_cli(f.args);
    const std::string what = f.args.front() + " " + f.args.back();
    EXPECT_EQ(r.status, f.status) << what << ": " << r.err;
    EXPECT_EQ(error_lines(r.err), 1U) << what << ": " << r.err;
    if (!f.err.empty()) {
      EXPECT_EQ(r.err, f.err) << what;
    }
  }
  EXPECT_FALSE(fs::exists(missing_dir));
}

TEST(CliErrorReport, EachUnreadableFileOfSeveralIsReportedAndTheOthersStillRun) {
  const auto dir = st_test::scratch_dir();
  const std::string in = good_file(dir).string();
  const std::string absent = (dir / "absent.bin").string();
  const auto r = run_cli({"checksum", absent, in, absent});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(error_lines(r.err), 2U) << r.err;
  EXPECT_NE(r.out.find("  " + in + "\n"), std::string::npos) << r.out;
}

}  // namespace
