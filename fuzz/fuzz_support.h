// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the fuzz targets: a property check that aborts (so libFuzzer and the
// replay driver both report it), and comparisons of parsed files.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/writer.h"

#define ST_FUZZ_CHECK(cond)                                                                    \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "fuzz property violated: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

namespace st_fuzz {

inline std::span<const std::byte> as_bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

/// "ok" or the error code's name: two readers agree when their verdicts are equal.
template <class R>
std::string verdict(const R& r) {
  return r ? std::string("ok") : std::string(safetensors::error_code_name(r.err().code));
}

/// Same tensors (names, dtypes, shapes, offsets) and metadata.
inline bool same_header(const safetensors::header& a, const safetensors::header& b) {
  if (a.tensors().size() != b.tensors().size() || a.metadata() != b.metadata()) return false;
  for (std::size_t i = 0; i < a.tensors().size(); ++i) {
    const auto& x = a.tensors()[i];
    const auto& y = b.tensors()[i];
    if (x.name != y.name || x.type != y.type || x.begin != y.begin || x.end != y.end ||
        !std::equal(x.shape.begin(), x.shape.end(), y.shape.begin(), y.shape.end())) {
      return false;
    }
  }
  return true;
}

/// Same tensors (by name: dtype, shape, bytes) and metadata; offsets may differ.
inline bool same_content(const safetensors::file& a, const safetensors::file& b) {
  if (a.tensors().size() != b.tensors().size() || a.header().metadata() != b.header().metadata()) return false;
  for (const auto& x : a.tensors()) {
    const auto* y = b.find(x.name);
    if (y == nullptr || x.type != y->type ||
        !std::equal(x.shape.begin(), x.shape.end(), y->shape.begin(), y->shape.end())) {
      return false;
    }
    auto dx = a.view(x).data;
    auto dy = b.view(*y).data;
    if (!std::equal(dx.begin(), dx.end(), dy.begin(), dy.end())) return false;
  }
  return true;
}

/// The tensors of a resident file, ready to be written again (bytes not copied).
inline std::vector<safetensors::tensor_data> tensors_of(const safetensors::file& f) {
  std::vector<safetensors::tensor_data> out;
  for (const auto& t : f.tensors()) {
    out.push_back({std::string(t.name), t.type, {t.shape.begin(), t.shape.end()}, f.view(t).data});
  }
  return out;
}

/// A per-process scratch path in $TMPDIR, else /dev/shm or /tmp (one file, overwritten by
/// every input, removed at exit).
inline const std::string& scratch_path(const char* tag) {
  struct scratch_file {
    std::string path;
    ~scratch_file() { std::remove(path.c_str()); }
  };
  static const scratch_file file{[tag] {
    // tmpfs when there is one: disk file systems flush rewritten files (ext4's
    // auto_da_alloc), which makes the open and writer targets 30x slower.
    const char* dir = std::getenv("TMPDIR");
    if (dir == nullptr) dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/st-fuzz-" + tag + "-" + std::to_string(::getpid()) + ".safetensors";
  }()};
  return file.path;
}

inline void write_whole(const std::string& path, std::span<const std::byte> bytes) {
  FILE* out = std::fopen(path.c_str(), "wb");
  ST_FUZZ_CHECK(out != nullptr);
  ST_FUZZ_CHECK(bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size());
  ST_FUZZ_CHECK(std::fclose(out) == 0);
}

inline std::vector<std::byte> read_whole(const std::string& path) {
  std::vector<std::byte> out;
  FILE* in = std::fopen(path.c_str(), "rb");
  ST_FUZZ_CHECK(in != nullptr);
  std::byte buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) out.insert(out.end(), buf, buf + n);
  std::fclose(in);
  return out;
}

/// The writer round trip of an accepted file: serialize(parse(x)) parses back to the same
/// tensors and metadata, serializing that again gives identical bytes, and stream_writer
/// (tensors in reverse order, two chunks each) writes the same bytes as serialize.
inline void check_round_trip(const safetensors::file& input) {
  using namespace safetensors;
  write_options options;
  options.metadata = input.header().metadata();
  auto tensors = tensors_of(input);
  auto written = serialize(tensors, options);
  ST_FUZZ_CHECK(written.ok());
  auto reread = file::from_buffer(*written);
  ST_FUZZ_CHECK(reread.ok() && same_content(input, *reread));
  auto again = serialize(tensors_of(*reread), options);
  ST_FUZZ_CHECK(again.ok() && *again == *written);

  std::vector<tensor_spec> specs;
  for (const auto& t : tensors) specs.push_back({t.name, t.type, t.shape});
  auto plan = write_plan::make(std::move(specs), options);
  ST_FUZZ_CHECK(plan.ok());
  const std::string& path = scratch_path("roundtrip");
  auto stream = stream_writer::create(path, std::move(plan).value());
  ST_FUZZ_CHECK(stream.ok());
  for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {  // any tensor order is allowed
    const std::size_t half = it->data.size() / 2;
    ST_FUZZ_CHECK(stream->append(it->name, it->data.first(half)).ok());
    ST_FUZZ_CHECK(stream->append(it->name, it->data.subspan(half)).ok());
  }
  ST_FUZZ_CHECK(stream->commit().ok());
  ST_FUZZ_CHECK(read_whole(path) == *written);
}

}  // namespace st_fuzz
