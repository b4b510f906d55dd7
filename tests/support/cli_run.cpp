// SPDX-License-Identifier: Apache-2.0
#include "support/cli_run.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "support/paths.h"
#include "support/pytorch_fixtures.h"
#include "support/status_matchers.h"

namespace st_test {

std::string cli_path() { return SAFETENSORS_CLI_PATH; }

std::string cli_shell(const std::string& args) {
  return args.empty() ? shell_quote(cli_path()) : shell_quote(cli_path()) + " " + args;
}

std::string quoted_path(const std::filesystem::path& path) { return shell_quote(path.string()); }

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

cli_result run_cli(const std::vector<std::string>& args) { return run_cli(args, cli_child{}); }

std::optional<uid_t> unprivileged_uid() {
  const struct passwd* pw = ::getpwnam("nobody");
  if (pw == nullptr || pw->pw_uid == 0) return std::nullopt;
  return pw->pw_uid;
}

cli_result run_cli(const std::vector<std::string>& args, const cli_child& child) {
  cli_result r;
  gid_t group = 0;
  if (child.user) {
    const struct passwd* pw = ::getpwuid(*child.user);
    group = pw != nullptr ? pw->pw_gid : static_cast<gid_t>(*child.user);
  }
  // Output goes to files, so a chatty child can never block on a full pipe.
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::getpid());
  const std::string out_path = (dir / ("st-cli-out-" + tag)).string();
  const std::string err_path = (dir / ("st-cli-err-" + tag)).string();
  std::vector<std::string> storage;
  std::vector<char*> argv = cli_argv(args, storage);

  int broken[2] = {-1, -1};
  if (child.stdout_to == cli_child::output::broken_pipe && ::pipe(broken) != 0) ADD_FAILURE() << "pipe failed";
  // Under a file size limit stderr goes through a pipe, which the limit does not cut short.
  int err_pipe[2] = {-1, -1};
  if (child.max_file_bytes && ::pipe(err_pipe) != 0) ADD_FAILURE() << "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    int out = -1;
    switch (child.stdout_to) {
      case cli_child::output::captured: out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600); break;
      case cli_child::output::discarded: out = ::open("/dev/null", O_WRONLY); break;
      case cli_child::output::broken_pipe:
        ::close(broken[0]);
        ::signal(SIGPIPE, SIG_IGN);
        out = broken[1];
        break;
    }
    if (err_pipe[0] >= 0) ::close(err_pipe[0]);
    const int err = err_pipe[1] >= 0 ? err_pipe[1] : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (child.max_file_bytes) {
      ::signal(SIGXFSZ, SIG_IGN);  // stays ignored across exec: writes fail with EFBIG instead
      const struct rlimit limit { *child.max_file_bytes, *child.max_file_bytes };
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(126);
    }
    if (child.user && (::setgroups(0, nullptr) != 0 || ::setgid(group) != 0 || ::setuid(*child.user) != 0)) {
      ::_exit(126);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  for (int fd : broken) {
    if (fd >= 0) ::close(fd);  // the reader is gone before the child writes
  }
  if (err_pipe[1] >= 0) {
    ::close(err_pipe[1]);
    r.err = drain(err_pipe[0]);  // until the child exits: it never blocks on a full pipe
    ::close(err_pipe[0]);
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
  for (const struct timeval& t : {usage.ru_utime, usage.ru_stime}) {
    r.cpu_seconds += static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  }
  for (auto [path, target] : {std::pair{&out_path, &r.out}, std::pair{&err_path, &r.err}}) {
    if (target == &r.err && err_pipe[0] >= 0) continue;
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
  ASSERT_OK(s);
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

namespace st_test {
namespace {

namespace fs = std::filesystem;

/// Runs a command that prepares an input; fails the test when it fails.
void prepare(const std::vector<std::string>& args) {
  const cli_result r = run_cli(args);
  EXPECT_EQ(r.status, 0) << args.front() << " " << args.at(1) << ": " << r.err;
}

/// The first shard of the checkpoint in `dir`.
fs::path first_shard(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with("model-00001-of-")) return e.path();
  }
  ADD_FAILURE() << "no first shard in " << dir;
  return dir / "model-00001-of-00001.safetensors";
}

}  // namespace

std::vector<std::string> writing_command::argv(const std::string& out) const {
  std::vector<std::string> all = before;
  all.push_back(out);
  all.insert(all.end(), after.begin(), after.end());
  return all;
}

std::vector<writing_command> writing_commands(const fs::path& dir) {
  fs::create_directories(dir);
  // Inputs: a quantizable F32 model, a copy for each in-place command, one tensor alone,
  // its MLX quantization, sharded checkpoints of both, NumPy, GGUF and PyTorch files.
  std::vector<float> w(4 * 64);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 17) * 0.01F;
  const std::vector<f32_tensor> tensors{{"model.layers.0.mlp.weight", {4, 64}, w},
                                        {"model.layers.1.mlp.weight", {4, 64}, w},
                                        {"model.norm.weight", {64}, std::vector<float>(64, 1.0F)}};
  const fs::path model = dir / "model.safetensors";
  make_f32_file(model, tensors);
  make_f32_file(dir / "cast-in.safetensors", tensors);
  make_f32_file(dir / "extract-in.safetensors", tensors);
  make_f32_file(dir / "one.safetensors", {tensors.back()});
  const auto p = [&](const char* name) { return (dir / name).string(); };
  prepare({"quantize", model.string(), p("q.safetensors")});
  prepare({"shard", model.string(), p("ck"), "--max-shard-size", "1100"});
  prepare({"shard", p("q.safetensors"), p("qck"), "--max-shard-size", "300"});
  prepare({"convert", model.string(), p("model.npz")});
  prepare({"convert", p("one.safetensors"), p("model.npy")});
  prepare({"convert", model.string(), p("model.gguf")});
  for (const char* name : {"basic.pt", "legacy.pt"}) fs::copy_file(pytorch_fixture(name), dir / name);
  fs::copy(pytorch_fixture("sharded"), dir / "torch", fs::copy_options::recursive);

  const auto file_out = [](std::string label, std::vector<std::string> before, const fs::path& input,
                           std::string output_name) {
    writing_command c;
    c.label = std::move(label);
    c.before = std::move(before);
    c.input = input;
    c.output_name = std::move(output_name);
    return c;
  };
  const auto dir_out = [&](std::string label, std::vector<std::string> before, const fs::path& input,
                           std::string output_name, std::string file_in_output) {
    writing_command c = file_out(std::move(label), std::move(before), input, std::move(output_name));
    c.directory_output = true;
    c.file_in_output = std::move(file_in_output);
    return c;
  };
  std::vector<writing_command> all;
  all.push_back(
      file_out("extract", {"extract", p("extract-in.safetensors")}, dir / "extract-in.safetensors", "out.safetensors"));
  all.back().rewrites_in_place = true;
  all.push_back(file_out("cast", {"cast", p("cast-in.safetensors")}, dir / "cast-in.safetensors", "out.safetensors"));
  all.back().after = {"--dtype", "BF16"};
  all.back().rewrites_in_place = true;
  all.push_back(file_out("merge", {"merge", p("ck")}, first_shard(dir / "ck"), "out.safetensors"));
  all.push_back(dir_out("shard", {"shard", model.string()}, model, "outdir", "model.safetensors"));
  all.back().input_dir = dir;  // shard writes model.safetensors: the input itself
  all.push_back(
      dir_out("shard of a checkpoint", {"shard", p("ck")}, first_shard(dir / "ck"), "outdir", "model.safetensors"));
  all.push_back(file_out("quantize", {"quantize", model.string()}, model, "out.safetensors"));
  all.push_back(file_out("quantize --config-out", {"quantize", model.string(), p("main.safetensors"), "--config-out"},
                         model, "config.json"));
  all.push_back(dir_out("quantize of a checkpoint", {"quantize", p("ck")}, first_shard(dir / "ck"), "qoutdir",
                        "model.safetensors"));
  all.push_back(file_out("dequantize", {"dequantize", p("q.safetensors")}, dir / "q.safetensors", "out.safetensors"));
  all.push_back(dir_out("dequantize of a checkpoint", {"dequantize", p("qck")}, first_shard(dir / "qck"), "doutdir",
                        "model.safetensors"));
  all.push_back(file_out("convert .safetensors -> .npz", {"convert", model.string()}, model, "out.npz"));
  all.push_back(
      file_out("convert .safetensors -> .npy", {"convert", p("one.safetensors")}, dir / "one.safetensors", "out.npy"));
  all.push_back(file_out("convert .safetensors -> .gguf", {"convert", model.string()}, model, "out.gguf"));
  for (const char* in : {"model.npz", "model.npy", "model.gguf", "basic.pt", "legacy.pt"}) {
    all.push_back(
        file_out(std::string("convert ") + in + " -> .safetensors", {"convert", p(in)}, dir / in, "out.safetensors"));
  }
  const fs::path torch_shard = dir / "torch" / "pytorch_model-00001-of-00002.bin";
  all.push_back(
      file_out("convert PyTorch shards -> one file", {"convert", p("torch")}, torch_shard, "out.safetensors"));
  all.push_back(file_out("convert PyTorch index -> one file",
                         {"convert", (dir / "torch" / "pytorch_model.bin.index.json").string()},
                         dir / "torch" / "pytorch_model.bin.index.json", "out.safetensors"));
  all.push_back(dir_out("convert PyTorch shards -> shards", {"convert", p("torch")}, torch_shard, "coutdir/",
                        "model-00001-of-00002.safetensors"));
  return all;
}

}  // namespace st_test
