// SPDX-License-Identifier: Apache-2.0
// Full loads and writes of a file of SAFETENSORS_BENCH_BYTES bytes (default 64 MiB) from
// and to the page cache, beside their physical baselines in the same process:
// - load: every byte touched, mmap (checksum in place) and pread (read_into resident
//   destinations) backends, 1 and 2 threads; baselines: memcpy of the same bytes from a
//   resident buffer, a checksum of a resident buffer (the floor for mmap's read-only pass),
//   and `cat FILE > /dev/null`.
// - write: write_file and stream_writer (both atomic: temp file, fsync, rename);
//   baseline: plain write(2) of the same bytes, with and without fsync + rename.
// - peak RSS of a streaming write, measured in a fresh child process (getrusage), for the
//   full size and a quarter of it: the bound does not depend on the file size.
//   (VmHWM of the child; see record_peak_rss.)
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_data.h"
#include "safetensors/file.h"
#include "safetensors/writer.h"

extern char** environ;

namespace safetensors::bench {
namespace {

constexpr std::size_t tensor_count = 64;
constexpr std::size_t chunk_bytes = std::size_t{1} << 20;

std::uint64_t total_bytes() {
  return std::max<std::uint64_t>(env_u64("SAFETENSORS_BENCH_BYTES", std::uint64_t{64} << 20), tensor_count * 8);
}

/// 64 BF16 tensors of equal size covering `bytes`.
std::vector<tensor_spec> io_specs(std::uint64_t bytes) {
  std::vector<tensor_spec> specs;
  for (std::size_t i = 0; i < tensor_count; ++i) {
    specs.push_back({fmt::format("model.layers.{}.mlp.up_proj.weight", i), dtype::BF16, {bytes / tensor_count / 2}});
  }
  return specs;
}

/// Touches every byte: a sum of 64-bit words the compiler vectorises.
std::uint64_t checksum(std::span<const std::byte> b) {
  std::uint64_t sum = 0;
  const std::size_t words = b.size() / 8;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, b.data() + i * 8, 8);
    sum += w;
  }
  for (std::size_t i = words * 8; i < b.size(); ++i) sum += std::to_integer<std::uint64_t>(b[i]);
  return sum;
}

/// Source bytes for writes, resident before any timing.
const std::vector<std::byte>& source() {
  static std::vector<std::byte> bytes = [] {
    std::vector<std::byte> b(total_bytes());
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>((i * 131) >> 3);
    return b;
  }();
  return bytes;
}

std::vector<tensor_data> source_tensors() {
  const auto& src = source();
  std::vector<tensor_data> out;
  std::size_t at = 0;
  for (tensor_spec& s : io_specs(src.size())) {
    const std::size_t n = s.shape[0] * 2;
    out.push_back({std::move(s.name), s.type, std::move(s.shape), std::span(src).subspan(at, n)});
    at += n;
  }
  return out;
}

std::string scratch(std::string_view what) {
  return fmt::format("{}/st_bench_{}_{}.safetensors", scratch_dir(), what, ::getpid());
}

/// The file the load benchmarks read, written once and left in the page cache.
const std::string& read_path() {
  static std::string path = [] {
    std::string p = scratch("io");
    auto s = write_file(p, source_tensors());
    if (!s) throw std::runtime_error(s.err().message);
    return p;
  }();
  return path;
}

struct cleanup {
  ~cleanup() {
    for (const char* what : {"io", "write", "stream", "plain", "rss"}) (void)::unlink(scratch(what).c_str());
    (void)::unlink((scratch("rss") + ".hwm").c_str());
  }
} cleanup_at_exit;

void report(benchmark::State& state, std::uint64_t bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["MiB"] = static_cast<double>(bytes) / (1 << 20);
}

void memcpy_resident(benchmark::State& state) {
  const auto& src = source();
  std::vector<std::byte> dst(src.size(), std::byte{1});
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  report(state, src.size());
}

void checksum_resident(benchmark::State& state) {
  const auto& src = source();
  for (auto _ : state) benchmark::DoNotOptimize(checksum(src));
  report(state, src.size());
}

/// Opens the file and loads every tensor, split over `threads` threads. mmap: a checksum
/// touches every byte in place (read once, as checksum_resident). pread: read_into copies
/// each tensor into its slot of a resident destination, as a loader fills its tensors
/// (read once and written once, as memcpy_resident).
void load(benchmark::State& state, io_backend backend) {
  const std::string& path = read_path();
  const auto threads = static_cast<std::size_t>(state.range(0));
  open_options o;
  o.backend = backend;
  std::vector<std::byte> destination;
  if (backend == io_backend::pread) destination.assign(source().size(), std::byte{1});
  std::uint64_t data = 0;
  for (auto _ : state) {
    auto f = file::open(path, o);
    if (!f) {
      state.SkipWithError(f.err().message.c_str());
      break;
    }
    const auto tensors = f->tensors();
    data = f->header().data_size();
    std::vector<std::uint64_t> sums(threads);
    std::vector<char> failed(threads, 0);
    auto work = [&](std::size_t t) {
      for (std::size_t i = t; i < tensors.size(); i += threads) {
        if (backend == io_backend::pread) {
          const auto slot = std::span(destination).subspan(tensors[i].begin, tensors[i].byte_size());
          if (!f->read_into(tensors[i], slot)) failed[t] = 1;
        } else {
          sums[t] += checksum(f->view(tensors[i]).data);
        }
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    if (std::find(failed.begin(), failed.end(), 1) != failed.end()) state.SkipWithError("read_into failed");
    benchmark::DoNotOptimize(sums.data());
    benchmark::ClobberMemory();
  }
  report(state, data);
}

// Baseline: what a shell user would time, `cat FILE > /dev/null` (a process, read(2) in
// 128 KiB calls, no copy kept).
void cat_file(benchmark::State& state) {
  const std::string command = fmt::format("cat '{}' > /dev/null", read_path());
  for (auto _ : state) {
    if (std::system(command.c_str()) != 0) state.SkipWithError("cat failed");
  }
  report(state, source().size());
}

void write_one_shot(benchmark::State& state) {
  const auto tensors = source_tensors();
  const std::string path = scratch("write");
  for (auto _ : state) {
    if (auto s = write_file(path, tensors); !s) state.SkipWithError(s.err().message.c_str());
  }
  report(state, source().size());
}

/// Streams the source in 1 MiB chunks; returns false on error.
bool stream_write(const std::string& path, std::span<const std::byte> src) {
  auto plan = write_plan::make(io_specs(src.size()));
  if (!plan) return false;
  auto w = stream_writer::create(path, std::move(plan).value());
  if (!w) return false;
  for (const planned_tensor& t : w->plan().tensors()) {
    const auto bytes = src.subspan(t.begin, t.byte_size());
    for (std::size_t at = 0; at < bytes.size(); at += chunk_bytes) {
      if (!w->append(t.name, bytes.subspan(at, std::min(chunk_bytes, bytes.size() - at)))) return false;
    }
  }
  return static_cast<bool>(w->commit());
}

void write_streaming(benchmark::State& state) {
  const std::string path = scratch("stream");
  for (auto _ : state) {
    if (!stream_write(path, source())) state.SkipWithError("stream write failed");
  }
  report(state, source().size());
}

/// Baseline: write(2) of the header and data in 1 MiB calls; with `durable`, also fsync
/// and rename, which is what the atomic writers do.
void plain_write(benchmark::State& state, bool durable) {
  const auto& src = source();
  const auto plan = write_plan::make(io_specs(src.size()));
  const std::string path = scratch("plain");
  const std::string temp = path + ".tmp";
  for (auto _ : state) {
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool ok = fd >= 0 && ::write(fd, plan->header_bytes().data(), plan->header_bytes().size()) >= 0;
    for (std::size_t at = 0; ok && at < src.size(); at += chunk_bytes) {
      const std::size_t n = std::min(chunk_bytes, src.size() - at);
      ok = ::write(fd, src.data() + at, n) == static_cast<ssize_t>(n);
    }
    if (durable) ok = ok && ::fsync(fd) == 0;
    ::close(fd);
    if (durable) ok = ok && ::rename(temp.c_str(), path.c_str()) == 0;
    if (!ok) state.SkipWithError("write(2) failed");
  }
  (void)::unlink(temp.c_str());
  report(state, src.size());
}

/// Peak RSS in KiB of a fresh copy of this program that streams `bytes` bytes (0: does nothing).
long child_peak_rss_kib(std::uint64_t bytes) {
  const std::string size_env = fmt::format("SAFETENSORS_BENCH_RSS_CHILD={}", bytes);
  const std::string path_env = fmt::format("SAFETENSORS_BENCH_RSS_PATH={}", scratch("rss"));
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(const_cast<char*>(size_env.c_str()));
  env.push_back(const_cast<char*>(path_env.c_str()));
  env.push_back(nullptr);
  char exe[] = "/proc/self/exe";
  char* argv[] = {exe, nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, exe, nullptr, nullptr, argv, env.data()) != 0) return -1;
  int wstatus = 0;
  if (::waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) return -1;
  std::FILE* in = std::fopen((scratch("rss") + ".hwm").c_str(), "r");
  long kib = -1;
  if (in != nullptr) {
    if (std::fscanf(in, "%ld", &kib) != 1) kib = -1;
    std::fclose(in);
  }
  return kib;
}

/// The child's own peak RSS: VmHWM belongs to the new address space, whereas getrusage's
/// ru_maxrss keeps the spawning parent's peak across exec (posix_spawn shares its memory).
void record_peak_rss(const std::string& path) {
  long kib = -1;
  if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, status) != nullptr) {
      if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    }
    std::fclose(status);
  }
  if (std::FILE* out = std::fopen((path + ".hwm").c_str(), "w")) {
    std::fprintf(out, "%ld\n", kib);
    std::fclose(out);
  }
}

/// In the child: generate the data one chunk at a time (never the whole file in memory).
const bool rss_child = [] {
  const char* size = std::getenv("SAFETENSORS_BENCH_RSS_CHILD");
  const char* path = std::getenv("SAFETENSORS_BENCH_RSS_PATH");
  if (size == nullptr || path == nullptr) return false;
  const std::uint64_t bytes = std::strtoull(size, nullptr, 10);
  if (bytes == 0) {
    record_peak_rss(path);
    std::_Exit(0);
  }
  auto plan = write_plan::make(io_specs(bytes));
  if (!plan) std::_Exit(1);
  auto w = stream_writer::create(path, std::move(plan).value());
  if (!w) std::_Exit(1);
  std::vector<std::byte> chunk(chunk_bytes, std::byte{7});
  for (const planned_tensor& t : w->plan().tensors()) {
    for (std::uint64_t at = 0; at < t.byte_size(); at += chunk_bytes) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, t.byte_size() - at));
      if (!w->append(t.name, std::span(chunk).first(n))) std::_Exit(1);
    }
  }
  const bool ok = static_cast<bool>(w->commit());
  (void)::unlink(path);
  record_peak_rss(path);
  std::_Exit(ok ? 0 : 1);
}();

void streaming_peak_rss(benchmark::State& state) {
  const std::uint64_t full = total_bytes();
  long idle = 0, quarter = 0, whole = 0;
  for (auto _ : state) {
    idle = child_peak_rss_kib(0);
    quarter = child_peak_rss_kib(full / 4);
    whole = child_peak_rss_kib(full);
  }
  if (idle < 0 || quarter < 0 || whole < 0) state.SkipWithError("child failed");
  state.counters["rss_idle_KiB"] = static_cast<double>(idle);
  state.counters["rss_quarter_KiB"] = static_cast<double>(quarter);
  state.counters["rss_full_KiB"] = static_cast<double>(whole);
  state.counters["MiB"] = static_cast<double>(full) / (1 << 20);
}

const bool registered = [] {
  benchmark::RegisterBenchmark("io/memcpy_resident", memcpy_resident)->UseRealTime();
  benchmark::RegisterBenchmark("io/checksum_resident", checksum_resident)->UseRealTime();
  benchmark::RegisterBenchmark("io/load_mmap", load, io_backend::mmap)->Arg(1)->Arg(2)->UseRealTime();
  benchmark::RegisterBenchmark("io/load_pread", load, io_backend::pread)->Arg(1)->Arg(2)->UseRealTime();
  benchmark::RegisterBenchmark("io/cat", cat_file)->UseRealTime();
  benchmark::RegisterBenchmark("io/plain_write", plain_write, false)->UseRealTime();
  benchmark::RegisterBenchmark("io/plain_write_fsync_rename", plain_write, true)->UseRealTime();
  benchmark::RegisterBenchmark("io/write_file", write_one_shot)->UseRealTime();
  benchmark::RegisterBenchmark("io/stream_writer", write_streaming)->UseRealTime();
  benchmark::RegisterBenchmark("io/stream_writer_peak_rss", streaming_peak_rss)->Iterations(1)->UseRealTime();
  return true;
}();

}  // namespace
}  // namespace safetensors::bench
