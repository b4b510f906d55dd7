// SPDX-License-Identifier: Apache-2.0
// SIGINT / SIGTERM in the middle of a write leave no hidden `.NAME.tmp-*` file behind, no
// new output or output directory, and an existing target untouched; the process still dies
// of the signal.
// Inputs are sparse files of 1 GiB (instant to make), so the commands are still writing
// when the signal arrives.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using safetensors::dtype;

/// Writes the header of `specs` and extends the file to its full size without data.
void write_sparse(const fs::path& path, std::vector<safetensors::tensor_spec> specs,
                  const std::optional<safetensors::metadata_map>& metadata = std::nullopt) {
  safetensors::write_options options;
  options.metadata = metadata;
  auto plan = safetensors::write_plan::make(std::move(specs), options);
  ASSERT_OK(plan);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const auto header = plan->header_bytes();
  ASSERT_EQ(::write(fd, header.data(), header.size()), static_cast<ssize_t>(header.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(plan->file_size())), 0);
  ::close(fd);
}

std::size_t count_temporaries(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp-") != std::string::npos) ++n;
  }
  return n;
}

struct interrupted {
  bool saw_temporary = false;
  int status = 0;
};

/// Starts the CLI, waits until `at_least` temporaries exist under `watch`, sends `sig`, reaps it.
interrupted interrupt_when_writing(const std::vector<std::string>& args, const fs::path& watch, int sig,
                                   std::size_t at_least = 1) {
  interrupted r;
  const int pid = st_test::start_cli(args);
  if (pid < 0) return r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(watch) && count_temporaries(watch) >= at_least) {
      r.saw_temporary = true;
      break;
    }
    if (::waitpid(pid, &r.status, WNOHANG) == pid) return r;  // finished (or failed) first
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, sig);
  ::waitpid(pid, &r.status, 0);
  return r;
}

constexpr std::uint64_t rows = 65536;  // 65536 x 4096 F32 = 1 GiB

TEST(CliSignals, InterruptedWritesLeaveNoTemporaries) {
  const auto dir = st_test::scratch_dir();
  const auto model = dir / "in" / "model.safetensors";
  fs::create_directories(model.parent_path());
  write_sparse(model, {{"model.layers.0.mlp.weight", dtype::F32, {rows / 2, 4096}},
                       {"model.layers.1.mlp.weight", dtype::F32, {rows / 2, 4096}}});
  // A quantized MLX file: 4-bit codes with BF16 scales and biases, group 64.
  const auto mlx = dir / "in" / "mlx.safetensors";
  write_sparse(mlx,
               {{"l.weight", dtype::U32, {rows, 512}},
                {"l.scales", dtype::BF16, {rows, 64}},
                {"l.biases", dtype::BF16, {rows, 64}}},
               safetensors::metadata_map{{"format", "mlx"},
                                         {"quantization_bits", "4"},
                                         {"quantization_group_size", "64"},
                                         {"quantization_mode", "affine"}});
  const auto sharded = dir / "sharded";
  fs::create_directories(sharded);
  write_sparse(sharded / "model-00001-of-00002.safetensors", {{"a", dtype::F32, {rows / 2, 4096}}});
  write_sparse(sharded / "model-00002-of-00002.safetensors", {{"b", dtype::F32, {rows / 2, 4096}}});
  std::ofstream(sharded / "model.safetensors.index.json")
      << R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", )"
      << R"("b": "model-00002-of-00002.safetensors"}})";

  const auto out = dir / "out";
  fs::create_directories(out);
  const auto target = (out / "x.safetensors").string();
  struct scenario {
    std::vector<std::string> args;
    int sig;
  };
  const std::vector<scenario> scenarios{
      {{"cast", model.string(), target, "--dtype", "BF16"}, SIGINT},
      {{"extract", model.string(), target, "--exclude", "model.layers.1.*"}, SIGTERM},
      {{"quantize", model.string(), target}, SIGINT},
      {{"dequantize", mlx.string(), target, "--dtype", "F32"}, SIGTERM},
      {{"merge", sharded.string(), target}, SIGINT},
      {{"shard", model.string(), (out / "shards").string(), "--max-shard-size", "300MB"}, SIGTERM},
  };
  for (const auto& s : scenarios) {
    SCOPED_TRACE(s.args[0]);
    const auto r = interrupt_when_writing(s.args, out, s.sig);
    ASSERT_TRUE(r.saw_temporary) << "the command ended before writing (status " << r.status << ")";
    EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == s.sig) << "status " << r.status;
    EXPECT_FALSE(count_temporaries(out) > 0) << "a temporary survived the signal";
    EXPECT_FALSE(fs::exists(target));
    EXPECT_FALSE(fs::exists(out / "shards")) << "the output directory it created survived the signal";
    for (const auto& e : fs::directory_iterator(out)) fs::remove_all(e.path());  // keep scenarios apart
  }

  // A checkpoint keeps every shard's temporary until all are written: past the registry's
  // first 64 slots too, each is removed.
  std::vector<safetensors::tensor_spec> many;
  for (int i = 0; i < 160; ++i) many.push_back({"t" + std::to_string(i), dtype::F32, {1024, 1024}});
  const auto wide = dir / "in" / "wide.safetensors";
  write_sparse(wide, many);
  const auto shards = interrupt_when_writing(
      {"shard", wide.string(), (out / "shards").string(), "--max-shard-size", "4MiB"}, out, SIGINT, 80);
  ASSERT_TRUE(shards.saw_temporary) << "the shards were written before 80 temporaries were seen";
  EXPECT_TRUE(WIFSIGNALED(shards.status) && WTERMSIG(shards.status) == SIGINT) << "status " << shards.status;
  EXPECT_EQ(count_temporaries(out), 0U);
  EXPECT_FALSE(fs::exists(out / "shards"));
  for (const auto& e : fs::directory_iterator(out)) fs::remove_all(e.path());
  // An output directory that was there before stays, with what else it held.
  fs::create_directories(out / "kept");
  std::ofstream(out / "kept" / "notes.txt") << "mine";
  const auto into_existing = interrupt_when_writing(
      {"shard", wide.string(), (out / "kept" / "new" / "shards").string(), "--max-shard-size", "4MiB"}, out, SIGTERM,
      3);
  ASSERT_TRUE(into_existing.saw_temporary);
  EXPECT_EQ(count_temporaries(out), 0U);
  EXPECT_FALSE(fs::exists(out / "kept" / "new"));
  EXPECT_TRUE(fs::exists(out / "kept" / "notes.txt"));
  for (const auto& e : fs::directory_iterator(out)) fs::remove_all(e.path());

  // An existing target is left as it was.
  std::ofstream(target) << "old";
  const auto r = interrupt_when_writing({"cast", model.string(), target, "--dtype", "F16"}, out, SIGINT);
  ASSERT_TRUE(r.saw_temporary);
  EXPECT_TRUE(WIFSIGNALED(r.status));
  EXPECT_FALSE(count_temporaries(out) > 0);
  EXPECT_EQ(fs::file_size(target), 3U);
}

}  // namespace
