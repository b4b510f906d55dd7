// SPDX-License-Identifier: Apache-2.0
// Header parse + validate throughput against a bare simdjson DOM parse and a memchr pass
// over the same bytes, and opening a large-header file (header only, fully validated,
// time to first tensor) against reading its header bytes with pread.
//
// Sizes: SAFETENSORS_BENCH_MAX_TENSORS caps the header sizes (1k, 100k, 1M tensors;
// default 1,000,000); SAFETENSORS_BENCH_OPEN_TENSORS sets the opened file's tensor
// count (default 100,000). Scratch files go to SAFETENSORS_BENCH_DIR or TMPDIR.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <simdjson.h>

#include "bench_data.h"
#include "header/header_builder.h"
#include "safetensors/file.h"
#include "safetensors/header.h"

namespace safetensors::bench {
namespace {

void report(benchmark::State& state, std::size_t bytes, std::size_t tensors) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(tensors));
  state.counters["tensors"] = static_cast<double>(tensors);
  state.counters["header_MB"] = static_cast<double>(bytes) / 1e6;
}

/// Minor page faults of the process so far: a parse that reuses its memory adds none.
std::int64_t minor_faults() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

void report_faults(benchmark::State& state, std::int64_t faults_before) {
  state.counters["faults_per_parse"] = static_cast<double>(minor_faults() - faults_before) /
                                       static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
}

void parse_validate(benchmark::State& state, std::size_t count) {
  const write_plan& plan = model_plan(count);
  const auto json = header_json(plan);
  (void)parse_header(json, plan.file_size());  // warm: faults below are the steady state
  const std::int64_t faults = minor_faults();
  for (auto _ : state) {
    auto h = parse_header(json, plan.file_size());
    if (!h) state.SkipWithError(h.err().message.c_str());
    benchmark::DoNotOptimize(h);
  }
  report_faults(state, faults);
  report(state, json.size(), count);
}

// With a header_parser of its own, reused across iterations like the baseline's parser
// (the free function's per-thread parser drops buffers past 16 MiB of JSON).
void parse_validate_reused(benchmark::State& state, std::size_t count) {
  const write_plan& plan = model_plan(count);
  const auto json = header_json(plan);
  header_parser parser;
  (void)parser.parse(json, plan.file_size());  // warm: faults below are the steady state
  const std::int64_t faults = minor_faults();
  for (auto _ : state) {
    auto h = parser.parse(json, plan.file_size());
    if (!h) state.SkipWithError(h.err().message.c_str());
    benchmark::DoNotOptimize(h);
  }
  report_faults(state, faults);
  report(state, json.size(), count);
}

// As parse_validate_reused, each header handed back to the parser when done with
// (header_parser::recycle): no fresh memory for the results either.
void parse_validate_recycled(benchmark::State& state, std::size_t count) {
  const write_plan& plan = model_plan(count);
  const auto json = header_json(plan);
  header_parser parser;
  if (auto warm = parser.parse(json, plan.file_size())) parser.recycle(std::move(*warm));
  const std::int64_t faults = minor_faults();
  for (auto _ : state) {
    auto h = parser.parse(json, plan.file_size());
    if (!h) {
      state.SkipWithError(h.err().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(h);
    parser.recycle(std::move(*h));
  }
  report_faults(state, faults);
  report(state, json.size(), count);
}

// Baseline: the bare parser, reused across iterations (its best case).
void simdjson_dom(benchmark::State& state, std::size_t count) {
  const write_plan& plan = model_plan(count);
  const auto json = header_json(plan);
  simdjson::dom::parser parser;
  (void)parser.parse(reinterpret_cast<const char*>(json.data()), json.size(), true);  // warm
  const std::int64_t faults = minor_faults();
  for (auto _ : state) {
    simdjson::dom::element root;
    auto err = parser.parse(reinterpret_cast<const char*>(json.data()), json.size(), true).get(root);
    if (err != simdjson::SUCCESS) state.SkipWithError(simdjson::error_message(err));
    benchmark::DoNotOptimize(root);
  }
  report_faults(state, faults);
  report(state, json.size(), count);
}

// What file::open does: the bytes after the JSON (here 64 spare bytes) pad it, so the
// parser reads it in place instead of copying it.
void parse_validate_in_place(benchmark::State& state, std::size_t count) {
  const write_plan& plan = model_plan(count);
  const auto json = header_json(plan);
  std::vector<std::byte> padded(json.size() + detail::json_padding);
  std::copy(json.begin(), json.end(), padded.begin());
  const auto text = std::span<const std::byte>(padded).first(json.size());
  const std::int64_t faults = minor_faults();
  for (auto _ : state) {
    auto h = detail::parse_header_padded(text, plan.file_size(), {});
    if (!h) state.SkipWithError(h.err().message.c_str());
    benchmark::DoNotOptimize(h);
  }
  report_faults(state, faults);
  report(state, json.size(), count);
}

// Baseline for it: the bare parser on padded input, without its copy.
void simdjson_dom_in_place(benchmark::State& state, std::size_t count) {
  const write_plan& plan = model_plan(count);
  const auto json = header_json(plan);
  const simdjson::padded_string padded(reinterpret_cast<const char*>(json.data()), json.size());
  simdjson::dom::parser parser;
  for (auto _ : state) {
    simdjson::dom::element root;
    auto err = parser.parse(padded).get(root);
    if (err != simdjson::SUCCESS) state.SkipWithError(simdjson::error_message(err));
    benchmark::DoNotOptimize(root);
  }
  report(state, json.size(), count);
}

// Baseline: one pass over the bytes looking for a byte that is not there.
void memchr_pass(benchmark::State& state, std::size_t count) {
  const write_plan& plan = model_plan(count);
  const auto json = header_json(plan);
  for (auto _ : state) {
    const void* hit = std::memchr(json.data(), 0x01, json.size());
    benchmark::DoNotOptimize(hit);
  }
  report(state, json.size(), count);
}

const std::string& open_path(std::size_t count) {
  static std::string path;
  if (path.empty())
    path = write_sparse_file(model_plan(count), fmt::format("st_bench_open_{}.safetensors", ::getpid()));
  return path;
}

// Removes the scratch file when the process ends.
struct open_file_cleanup {
  ~open_file_cleanup() {
    const char* keep = std::getenv("SAFETENSORS_BENCH_KEEP");
    if (keep == nullptr)
      (void)::unlink(fmt::format("{}/st_bench_open_{}.safetensors", scratch_dir(), ::getpid()).c_str());
  }
} cleanup_at_exit;

void open_read_header(benchmark::State& state, std::size_t count) {
  const std::string& path = open_path(count);
  for (auto _ : state) {
    auto h = read_header(path);
    if (!h) state.SkipWithError(h.err().message.c_str());
    benchmark::DoNotOptimize(h);
  }
  report(state, header_json(model_plan(count)).size(), count);
}

void open_file(benchmark::State& state, std::size_t count, io_backend backend) {
  const std::string& path = open_path(count);
  open_options o;
  o.backend = backend;
  for (auto _ : state) {
    auto f = file::open(path, o);
    if (!f) state.SkipWithError(f.err().message.c_str());
    benchmark::DoNotOptimize(f);
  }
  report(state, header_json(model_plan(count)).size(), count);
}

// As open_file (mmap), with a header_parser of the program's own that each file's header is
// handed back to (open_options::parser, file::take_header, header_parser::recycle): what a
// reader of many files does to fault in no fresh memory per file.
void open_file_recycled(benchmark::State& state, std::size_t count) {
  const std::string& path = open_path(count);
  header_parser parser;
  open_options o;
  o.parser = &parser;
  for (auto _ : state) {
    auto f = file::open(path, o);
    if (!f) {
      state.SkipWithError(f.err().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(f);
    parser.recycle(std::move(*f).take_header());
  }
  report(state, header_json(model_plan(count)).size(), count);
}

// Open (mmap, validated), look a tensor up by name and touch its first byte.
void first_tensor(benchmark::State& state, std::size_t count) {
  const std::string& path = open_path(count);
  const std::string name(model_plan(count).tensors().front().name);
  for (auto _ : state) {
    auto f = file::open(path);
    if (!f) {
      state.SkipWithError(f.err().message.c_str());
      break;
    }
    auto v = f->view(name);
    if (!v || v->data.empty()) {
      state.SkipWithError("no first tensor");
      break;
    }
    benchmark::DoNotOptimize(v->data[0]);
  }
  report(state, header_json(model_plan(count)).size(), count);
}

// Baseline: open the file and pread its 8 + N header bytes, nothing else.
void pread_header_bytes(benchmark::State& state, std::size_t count) {
  const std::string& path = open_path(count);
  const std::size_t n = model_plan(count).data_start();
  std::vector<char> buffer(n);
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    const ssize_t got = ::pread(fd, buffer.data(), n, 0);
    ::close(fd);
    if (got != static_cast<ssize_t>(n)) state.SkipWithError("short read");
    benchmark::DoNotOptimize(buffer.data());
  }
  report(state, header_json(model_plan(count)).size(), count);
}

// Registration at start-up so sizes can come from the environment.
const bool registered = [] {
  const std::uint64_t max_tensors = env_u64("SAFETENSORS_BENCH_MAX_TENSORS", 1'000'000);
  std::vector<std::size_t> sizes;
  for (std::size_t n : {1'000UL, 100'000UL, 1'000'000UL}) {
    if (n <= max_tensors) sizes.push_back(n);
  }
  if (sizes.empty()) sizes.push_back(static_cast<std::size_t>(std::max<std::uint64_t>(max_tensors, 9)));
  for (std::size_t n : sizes) {
    benchmark::RegisterBenchmark(fmt::format("header/parse_validate/{}", n).c_str(), parse_validate, n);
    benchmark::RegisterBenchmark(fmt::format("header/header_parser/{}", n).c_str(), parse_validate_reused, n);
    benchmark::RegisterBenchmark(fmt::format("header/header_parser_recycled/{}", n).c_str(), parse_validate_recycled,
                                 n);
    benchmark::RegisterBenchmark(fmt::format("header/simdjson_dom/{}", n).c_str(), simdjson_dom, n);
    benchmark::RegisterBenchmark(fmt::format("header/memchr/{}", n).c_str(), memchr_pass, n);
    benchmark::RegisterBenchmark(fmt::format("header/parse_validate_in_place/{}", n).c_str(), parse_validate_in_place,
                                 n);
    benchmark::RegisterBenchmark(fmt::format("header/simdjson_dom_in_place/{}", n).c_str(), simdjson_dom_in_place, n);
  }
  const auto open_n = static_cast<std::size_t>(env_u64("SAFETENSORS_BENCH_OPEN_TENSORS", 100'000));
  benchmark::RegisterBenchmark(fmt::format("open/pread_header_bytes/{}", open_n).c_str(), pread_header_bytes, open_n);
  benchmark::RegisterBenchmark(fmt::format("open/read_header/{}", open_n).c_str(), open_read_header, open_n);
  benchmark::RegisterBenchmark(fmt::format("open/file_open_mmap/{}", open_n).c_str(), open_file, open_n,
                               io_backend::mmap);
  benchmark::RegisterBenchmark(fmt::format("open/file_open_pread/{}", open_n).c_str(), open_file, open_n,
                               io_backend::pread);
  benchmark::RegisterBenchmark(fmt::format("open/file_open_recycled/{}", open_n).c_str(), open_file_recycled, open_n);
  benchmark::RegisterBenchmark(fmt::format("open/first_tensor/{}", open_n).c_str(), first_tensor, open_n);
  return true;
}();

}  // namespace
}  // namespace safetensors::bench
