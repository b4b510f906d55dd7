// SPDX-License-Identifier: Apache-2.0
#include "support/cli_run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "support/paths.h"

namespace st_test {

std::string cli_path() { return SAFETENSORS_CLI_PATH; }

namespace {

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  return out;
}

/// The CLI's argv: the binary, then `args`; `storage` owns the strings.
std::vector<char*> cli_argv(const std::vector<std::string>& args, std::vector<std::string>& storage) {
  storage = {cli_path()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

}  // namespace

cli_result run_cli(const std::vector<std::string>& args) {
  cli_result r;
  // Output goes to files, so a chatty child can never block on a full pipe.
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::getpid());
  const std::string out_path = (dir / ("st-cli-out-" + tag)).string();
  const std::string err_path = (dir / ("st-cli-err-" + tag)).string();
  std::vector<std::string> storage;
  std::vector<char*> argv = cli_argv(args, storage);

  const pid_t pid = ::fork();
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) {
    ADD_FAILURE() << "cannot run " << cli_path();
    return r;
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (WIFSIGNALED(status)) ADD_FAILURE() << "safetensors killed by signal " << WTERMSIG(status);
  r.max_rss_kib = usage.ru_maxrss;
  for (auto [path, target] : {std::pair{&out_path, &r.out}, std::pair{&err_path, &r.err}}) {
    const int fd = ::open(path->c_str(), O_RDONLY);
    if (fd >= 0) {
      *target = drain(fd);
      ::close(fd);
    }
    ::unlink(path->c_str());
  }
  return r;
}

int start_cli(const std::vector<std::string>& args) {
  std::vector<std::string> storage;
  std::vector<char*> argv = cli_argv(args, storage);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0) ::_exit(127);
    for (int fd : {0, 1, 2}) ::dup2(null, fd);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (pid < 0) ADD_FAILURE() << "cannot start " << cli_path();
  return pid;
}

void make_f32_file(const std::filesystem::path& path, const std::vector<f32_tensor>& tensors,
                   const std::optional<safetensors::metadata_map>& metadata) {
  std::vector<safetensors::tensor_data> data;
  for (const auto& t : tensors) {
    data.push_back({t.name, safetensors::dtype::F32, t.shape, std::as_bytes(std::span<const float>(t.values))});
  }
  safetensors::write_options options;
  options.metadata = metadata;
  auto s = safetensors::write_file(path.string(), data, options);
  ASSERT_TRUE(s.ok()) << s.err().to_string();
}

std::vector<std::vector<std::string>> reading_commands(const std::filesystem::path& input, bool with_checks) {
  const std::string p = input.string();
  const std::string out = (input.parent_path() / "out.safetensors").string();
  std::vector<std::vector<std::string>> commands = {
      {"inspect", "--tree", p},
      {"ls", p},
      {"meta", p},
      {"dump", p, "w"},
      {"stats", p},
      {"diff", p, p},
      {"checksum", "--per-tensor", p},
      {"extract", p, out},
      {"cast", p, out, "--dtype", "BF16"},
      {"merge", p, out},
      {"dequantize", p, out},
      {"quantize", p, out},
      {"shard", p, (input.parent_path() / "shards").string()},
  };
  if (with_checks) {
    commands.push_back({"validate", p});
    commands.push_back({"verify", p});
  }
  return commands;
}

}  // namespace st_test
