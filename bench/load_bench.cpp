// SPDX-License-Identifier: Apache-2.0
// Full loads of one file from the page cache, every byte touched (a checksum of the
// destination), through the loader on the mmap and pread backends with 1 and 2 threads,
// beside baselines measured in the same run: memcpy of the same bytes from memory (with
// the same checksum), a checksum read straight off the mapping, and a `cat > /dev/null`
// equivalent (sequential 1 MiB preads, no checksum). Then one tensor-parallel rank's
// slice (world 4, columns: many short ranges; rows: one range per tensor) beside the full
// load. BM_RankRead: a rank's row-split part read on pread now, by the rule before issue 38
// (gaps read while half of a window is wanted) and on mmap, with the bytes each read.
//
// Size: SAFETENSORS_LOAD_BENCH_BYTES (default 256 MiB). Scratch file in
// SAFETENSORS_BENCH_DIR or TMPDIR (default /tmp); it is read once before measuring so the
// page cache is warm (needs that much free RAM). Multi-GB run, e.g. 4 GiB:
//   SAFETENSORS_LOAD_BENCH_BYTES=4294967296 build/bench/safetensors_bench
//       --benchmark_filter='Load|Memcpy|Cat|Slice|MmapView' --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <thread>
#include <vector>

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

/// Issue 38's baseline: the pread backend's read of a slice before it, which fetched ranges
/// through a 1 MiB bounce buffer while at least half of the window was wanted (a rank's
/// part of a row split at world 2 read the whole tensor).
safetensors::status read_through_half_full_windows(const safetensors::file& f, const safetensors::slice_plan& plan,
                                                   std::span<std::byte> destination) {
  constexpr std::uint64_t window = std::uint64_t{1} << 20;
  const auto& r = plan.ranges;
  std::vector<std::byte> bounce;
  std::size_t out = 0;
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i + 1;
    std::uint64_t useful = r[i].length;
    while (j < r.size() && r[j].offset >= r[j - 1].offset + r[j - 1].length &&
           r[j].offset + r[j].length - r[i].offset <= window &&
           (useful + r[j].length) * 2 >= r[j].offset + r[j].length - r[i].offset) {
      useful += r[j].length;
      ++j;
    }
    if (j == i + 1) {
      if (auto s = f.read_range(r[i].offset, destination.subspan(out, r[i].length)); !s) return s;
      out += r[i].length;
      i = j;
      continue;
    }
    const std::uint64_t base = r[i].offset;
    bounce.resize(r[j - 1].offset + r[j - 1].length - base);
    if (auto s = f.read_range(base, bounce); !s) return s;
    for (; i < j; ++i) {
      std::memcpy(destination.data() + out, bounce.data() + (r[i].offset - base), r[i].length);
      out += r[i].length;
    }
  }
  return {};
}

/// Bytes this process has read with read(2)/pread(2) (the kernel's count, /proc/self/io).
std::uint64_t bytes_read_so_far() {
  std::FILE* io = std::fopen("/proc/self/io", "r");
  if (io == nullptr) return 0;
  unsigned long long rchar = 0;
  if (std::fscanf(io, "rchar: %llu", &rchar) != 1) rchar = 0;
  std::fclose(io);
  return rchar;
}

/// Rank 0's part of a row split (dim 1) of every tensor at world size range(0), each tensor
/// viewed as rows of range(1) BF16 values, read on the pread backend by read_slice
/// (range(2) = 0) or by the old half-full-window read (1), or by read_slice on the mmap
/// backend (2: memcpy run by run out of the mapping; its page faults are not in read_x), one thread. The file is
/// re-read before each timed pass (the machine pages out idle page cache). Counter read_x: bytes read / bytes wanted.
void BM_RankRead(benchmark::State& state) {
  if (!ready(state)) return;
  auto& d = data();
  const auto world = static_cast<std::uint64_t>(state.range(0));
  const auto columns_per_row = static_cast<std::uint64_t>(state.range(1));
  const bool old_path = state.range(2) == 1;
  safetensors::open_options o;
  o.backend = safetensors::io_backend::pread;
  auto f = safetensors::file::open(d.path, o);  // also re-reads the file before each pass
  if (state.range(2) == 2) o.backend = safetensors::io_backend::mmap;
  if (!f) {
    state.SkipWithError(f.err().to_string().c_str());
    return;
  }
  std::vector<safetensors::slice_plan> plans;
  std::uint64_t wanted = 0;
  for (const auto& t : f->tensors()) {
    safetensors::tensor_info rows = t;
    const std::vector<std::uint64_t> shape = {t.byte_size() / 2 / columns_per_row, columns_per_row};
    rows.shape = shape;
    plans.push_back(safetensors::plan_tensor_parallel(rows, f->header().data_start(), 1, 0, world).value());
    wanted += plans.back().byte_size;
  }
  std::vector<std::byte> warm(std::size_t{1} << 20);
  std::uint64_t read = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (std::uint64_t at = 0; at < d.bytes; at += warm.size()) {  // re-read through pread, never mapped
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(warm.size(), f->file_size() - at));
      if (auto s = f->read_range(at, {warm.data(), n}); !s) state.SkipWithError(s.err().to_string().c_str());
    }
    auto fresh = safetensors::file::open(d.path, o);  // a new mapping: no page mapped yet
    if (!fresh) {
      state.SkipWithError(fresh.err().to_string().c_str());
      state.ResumeTiming();
      break;
    }
    const std::uint64_t before = bytes_read_so_far();
    state.ResumeTiming();
    std::uint64_t at = 0;
    for (const auto& plan : plans) {
      const std::span<std::byte> into(d.destination.get() + at, plan.byte_size);
      auto s =
          old_path ? read_through_half_full_windows(*fresh, plan, into) : safetensors::read_slice(*fresh, plan, into);
      if (!s) state.SkipWithError(s.err().to_string().c_str());
      at += plan.byte_size;
    }
    state.PauseTiming();
    read += bytes_read_so_far() - before;
    state.ResumeTiming();
  }
  finish(state, wanted);
  state.counters["read_x"] =
      static_cast<double>(read) / static_cast<double>(wanted) / static_cast<double>(state.iterations());
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
// The old path, read_slice and the mapping for each world size and row length.
BENCHMARK(BM_RankRead)
    ->ArgNames({"world", "row", "old"})
    ->ArgsProduct({{2, 4, 8}, {1024, 4096, 16384}, {1, 0, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
