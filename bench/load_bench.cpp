// SPDX-License-Identifier: Apache-2.0
// Full loads of one file from the page cache, every byte touched (a checksum of the
// destination), through the loader on the mmap and pread backends with 1 and 2 threads,
// beside baselines measured in the same run: memcpy of the same bytes from memory (with
// the same checksum), a checksum read straight off the mapping, and a `cat > /dev/null`
// equivalent (sequential 1 MiB preads, no checksum). Then one tensor-parallel rank's
// slice (world 4, columns: many short ranges; rows: one range per tensor) beside the full
// load.
//
// Size: SAFETENSORS_LOAD_BENCH_BYTES (default 256 MiB). Scratch file in
// SAFETENSORS_BENCH_DIR or TMPDIR (default /tmp); it is read once before measuring so the
// page cache is warm (needs that much free RAM). Multi-GB run, e.g. 4 GiB:
//   SAFETENSORS_LOAD_BENCH_BYTES=4294967296 build/bench/safetensors_bench
//       --benchmark_filter='Load|Memcpy|Cat|Slice|MmapView' --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "safetensors/loader.h"
#include "safetensors/slice.h"
#include "safetensors/writer.h"

namespace {

std::uint64_t env_bytes() {
  const char* v = std::getenv("SAFETENSORS_LOAD_BENCH_BYTES");
  const std::uint64_t n = v != nullptr ? std::strtoull(v, nullptr, 10) : 0;
  return n >= (std::uint64_t{1} << 20) ? n : std::uint64_t{256} << 20;
}

constexpr std::size_t tensor_count = 16;
constexpr std::uint64_t columns = 4096;  // BF16: 8 KiB rows

/// The scratch checkpoint: 16 BF16 [rows, 4096] tensors, written once per process.
struct bench_file {
  std::string path;
  std::uint64_t bytes = 0;
  std::unique_ptr<std::byte[]> source;       // the same bytes in memory, for the memcpy baseline
  std::unique_ptr<std::byte[]> destination;  // pre-faulted once
  std::string error;

  bench_file() {
    const char* dir = std::getenv("SAFETENSORS_BENCH_DIR");
    if (dir == nullptr) dir = std::getenv("TMPDIR");
    path = fmt::format("{}/safetensors-load-bench-{}.safetensors", dir != nullptr ? dir : "/tmp", ::getpid());
    const std::uint64_t rows = std::max<std::uint64_t>(env_bytes() / tensor_count / (columns * 2), 1);
    std::vector<safetensors::tensor_spec> specs;
    for (std::size_t i = 0; i < tensor_count; ++i)
      specs.push_back({fmt::format("w{:02}", i), safetensors::dtype::BF16, {rows, columns}});
    auto plan = safetensors::write_plan::make(specs);
    auto writer = safetensors::stream_writer::create(path, std::move(plan).value());
    if (!writer) {
      error = writer.err().to_string();
      return;
    }
    const std::uint64_t per_tensor = rows * columns * 2;
    bytes = per_tensor * tensor_count;
    source = std::make_unique_for_overwrite<std::byte[]>(bytes);
    destination = std::make_unique_for_overwrite<std::byte[]>(bytes);
    for (std::uint64_t i = 0; i < bytes; ++i) source[i] = static_cast<std::byte>((i * 2654435761U) >> 13);
    std::memset(destination.get(), 1, bytes);
    for (std::size_t i = 0; i < tensor_count; ++i) {
      if (auto s = writer->append(specs[i].name, {source.get() + i * per_tensor, per_tensor}); !s) {
        error = s.err().to_string();
        return;
      }
    }
    if (auto s = writer->commit(); !s) error = s.err().to_string();
  }
  ~bench_file() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

bench_file& data() {
  static bench_file f;
  return f;
}

/// Sums 64-bit words of `bytes` on `threads` threads: touches every byte.
std::uint64_t checksum(const std::byte* p, std::uint64_t n, unsigned threads) {
  std::vector<std::uint64_t> partial(threads, 0);
  auto part = [&](unsigned t) {
    const std::uint64_t begin = n / threads * t / 8 * 8;
    const std::uint64_t end = t + 1 == threads ? n : n / threads * (t + 1) / 8 * 8;
    std::uint64_t sum = 0;
    for (std::uint64_t i = begin; i + 8 <= end; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      sum += w;
    }
    partial[t] = sum;
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(part, t);
    part(0);
  }
  std::uint64_t total = 0;
  for (auto s : partial) total += s;
  return total;
}

bool ready(benchmark::State& state) {
  if (!data().error.empty()) {
    state.SkipWithError(data().error.c_str());
    return false;
  }
  return true;
}

void finish(benchmark::State& state, std::uint64_t bytes_per_iteration) {
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes_per_iteration) * state.iterations());
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes_per_iteration) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void BM_MemcpyBaseline(benchmark::State& state) {
  if (!ready(state)) return;
  const auto threads = static_cast<unsigned>(state.range(0));
  auto& d = data();
  for (auto _ : state) {
    {
      std::vector<std::jthread> pool;
      auto part = [&](unsigned t) {
        const std::uint64_t begin = d.bytes / threads * t;
        const std::uint64_t end = t + 1 == threads ? d.bytes : d.bytes / threads * (t + 1);
        std::memcpy(d.destination.get() + begin, d.source.get() + begin, end - begin);
      };
      for (unsigned t = 1; t < threads; ++t) pool.emplace_back(part, t);
      part(0);
    }
    benchmark::DoNotOptimize(checksum(d.destination.get(), d.bytes, threads));
  }
  finish(state, d.bytes);
}

void BM_Load(benchmark::State& state, safetensors::io_backend backend) {
  if (!ready(state)) return;
  auto& d = data();
  const auto threads = static_cast<unsigned>(state.range(0));
  safetensors::open_options o;
  o.backend = backend;
  auto f = safetensors::file::open(d.path, o);
  if (!f) {
    state.SkipWithError(f.err().to_string().c_str());
    return;
  }
  std::vector<safetensors::load_request> requests;
  std::uint64_t at = 0;
  for (const auto& t : f->tensors()) {
    requests.push_back({&*f, &t, nullptr, {d.destination.get() + at, t.byte_size()}});
    at += t.byte_size();
  }
  safetensors::load_options lo;
  lo.threads = threads;
  for (auto _ : state) {
    if (auto s = safetensors::load(requests, lo); !s) state.SkipWithError(s.err().to_string().c_str());
    benchmark::DoNotOptimize(checksum(d.destination.get(), d.bytes, threads));
  }
  finish(state, d.bytes);
}

void BM_MmapViewChecksum(benchmark::State& state) {
  if (!ready(state)) return;
  auto& d = data();
  const auto threads = static_cast<unsigned>(state.range(0));
  auto f = safetensors::file::open(d.path);
  if (!f) {
    state.SkipWithError(f.err().to_string().c_str());
    return;
  }
  const auto first = f->view(f->tensors().front()).data.data();
  for (auto _ : state) benchmark::DoNotOptimize(checksum(first, d.bytes, threads));
  finish(state, d.bytes);
}

/// What `cat FILE > /dev/null` does: sequential reads into one 1 MiB buffer.
void BM_CatBaseline(benchmark::State& state) {
  if (!ready(state)) return;
  auto& d = data();
  safetensors::open_options o;
  o.backend = safetensors::io_backend::pread;
  auto f = safetensors::file::open(d.path, o);
  if (!f) {
    state.SkipWithError(f.err().to_string().c_str());
    return;
  }
  std::vector<std::byte> buffer(std::size_t{1} << 20);
  for (auto _ : state) {
    for (std::uint64_t at = 0; at < f->file_size(); at += buffer.size()) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), f->file_size() - at));
      if (auto s = f->read_range(at, {buffer.data(), n}); !s) state.SkipWithError(s.err().to_string().c_str());
    }
    benchmark::DoNotOptimize(buffer.data());
  }
  finish(state, f->file_size());
}

/// Rank 0 of 4 along `dim` of every tensor (dim 1: 2 KiB of each 8 KiB row).
void BM_SliceLoad(benchmark::State& state, safetensors::io_backend backend) {
  if (!ready(state)) return;
  auto& d = data();
  const auto dim = static_cast<std::size_t>(state.range(0));
  safetensors::open_options o;
  o.backend = backend;
  auto f = safetensors::file::open(d.path, o);
  if (!f) {
    state.SkipWithError(f.err().to_string().c_str());
    return;
  }
  std::vector<safetensors::slice_plan> plans;
  for (const auto& t : f->tensors()) {
    plans.push_back(safetensors::plan_tensor_parallel(t, f->header().data_start(), dim, 0, 4).value());
  }
  std::vector<safetensors::load_request> requests;
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    requests.push_back({&*f, &f->tensors()[i], &plans[i], {d.destination.get() + at, plans[i].byte_size}});
    at += plans[i].byte_size;
  }
  safetensors::load_options lo;
  lo.threads = 2;
  for (auto _ : state) {
    if (auto s = safetensors::load(requests, lo); !s) state.SkipWithError(s.err().to_string().c_str());
    benchmark::DoNotOptimize(checksum(d.destination.get(), at, 2));
  }
  finish(state, at);
}

BENCHMARK(BM_MemcpyBaseline)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Load, mmap, safetensors::io_backend::mmap)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Load, pread, safetensors::io_backend::pread)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MmapViewChecksum)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CatBaseline)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SliceLoad, pread, safetensors::io_backend::pread)
    ->ArgName("dim")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SliceLoad, mmap, safetensors::io_backend::mmap)
    ->ArgName("dim")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
