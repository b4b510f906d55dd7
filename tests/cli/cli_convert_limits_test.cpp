// SPDX-License-Identifier: Apache-2.0
// `convert` of an .npz zip bomb: refused up front by --max-ratio / --max-expanded-size,
// and within raised limits streamed, so that even under a memory limit it converts and
// running out of memory is never an "internal error: std::bad_alloc".
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "safetensors/file.h"
#include "safetensors/formats/npz.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/sanitizers.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;

/// A deflated F32 array of zeros written by the library (a real ~1000:1 deflate stream).
void write_zero_npz(const fs::path& path, std::vector<std::uint64_t> shape) {
  auto writer = safetensors::numpy::npz_writer::create(path.string(), {.compress = true});
  ASSERT_OK(writer);
  ASSERT_OK(writer->begin_array("zeros", safetensors::dtype::F32, shape));
  std::uint64_t bytes = 4;
  for (auto d : shape) bytes *= d;
  const std::vector<std::byte> zeros(std::size_t{1} << 20);
  for (std::uint64_t done = 0; done < bytes; done += zeros.size()) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(zeros.size(), bytes - done));
    ASSERT_OK(writer->append(std::span(zeros).first(n)));
  }
  ASSERT_OK(writer->commit());
}

struct limited_result {
  int status = -1;
  std::string err;
};

/// Runs the CLI in a child whose address space is capped at `as_bytes` (RLIMIT_AS), its
/// stderr to `err_path`.
limited_result run_cli_limited(const std::vector<std::string>& args, rlim_t as_bytes, const fs::path& err_path) {
  std::vector<std::string> storage{st_test::cli_path()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int null = ::open("/dev/null", O_RDWR);
    if (err < 0 || null < 0) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(err, 2);
    rlimit limit{as_bytes, as_bytes};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  limited_result r;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) {
    ADD_FAILURE() << "cannot run the CLI";
    return r;
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream text;
  text << in.rdbuf();
  r.err = text.str();
  return r;
}

TEST(CliConvertLimits, NpzBombIsRefusedQuicklyNamingTheLimit) {
  const auto dir = st_test::scratch_dir();
  const auto bomb = dir / "bomb.npz";
  write_zero_npz(bomb, {8192, 8192});  // 256 MiB of zeros in about 256 KiB
  const auto out = dir / "out.safetensors";
  const auto start = std::chrono::steady_clock::now();
  auto r = st_test::run_cli({"convert", bomb.string(), out.string(), "-q"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("zeros.npy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("limit of 200:1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));

  r = st_test::run_cli(
      {"convert", bomb.string(), out.string(), "-q", "--max-ratio", "2000", "--max-expanded-size", "100MiB"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("limit of 104857600 bytes"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));

  r = st_test::run_cli({"convert", bomb.string(), out.string(), "--max-expanded-size", "lots"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--max-expanded-size"), std::string::npos) << r.err;
}

// Within raised limits the 256 MiB member is streamed into the output: it converts in a
// 160 MiB address space, where holding it whole ran out of memory ("internal error:
// std::bad_alloc").
TEST(CliConvertLimits, RaisedLimitsStreamTheMemberUnderAMemoryLimit) {
#if ST_TEST_UNDER_SANITIZER
  GTEST_SKIP() << "sanitizers reserve far more address space than the limit";
#endif
  const auto dir = st_test::scratch_dir();
  const auto bomb = dir / "bomb.npz";
  write_zero_npz(bomb, {8192, 8192});
  const auto out = dir / "out.safetensors";
  auto r = run_cli_limited({"convert", bomb.string(), out.string(), "-q", "--max-ratio", "2000"}, rlim_t{160} << 20,
                           dir / "stderr.txt");
  EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  auto f = safetensors::read_header(out.string());
  ASSERT_OK(f) << f.err().to_string();
  EXPECT_EQ(f->data_size(), std::uint64_t{256} << 20);
}

}  // namespace
