// SPDX-License-Identifier: Apache-2.0
// The built-in rows, one per format, and the rows a program registers.
#include "safetensors/pipeline/format_table.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <mutex>

#include <fmt/format.h>

#include "format_describers.h"
#include "safetensors/readonly_file.h"
#include "safetensors/sniff.h"

// The WebAssembly inspector compiles the table to describe files only (web/CMakeLists.txt): its
// rows have no sources or sinks, so it links neither the pipelines nor OpenSSL (GGUF's hashed
// long names), and the browser describes a file with the CLI's describers and words.
#ifdef SAFETENSORS_FORMAT_TABLE_DESCRIBE_ONLY
#define SAFETENSORS_CONVERTER(...) \
  {}
#else
#define SAFETENSORS_CONVERTER(...) __VA_ARGS__
#endif

namespace safetensors::pipeline {
namespace {

/// Claims a file whose first bytes the core's sniff_format classifies as one of `verdicts`.
std::function<bool(std::span<const std::byte>)> sniffed_as(std::initializer_list<file_format> verdicts) {
  return [kinds = std::vector<file_format>(verdicts)](std::span<const std::byte> prefix) {
    return std::find(kinds.begin(), kinds.end(), sniff_format(prefix)) != kinds.end();
  };
}

std::deque<format_row> built_in_rows() {
  std::deque<format_row> rows;
  rows.push_back({.id = "safetensors",
                  .name = "SafeTensors",
                  .extensions = {".safetensors"},
                  .sniff = sniffed_as({file_format::safetensors}),
                  .open = SAFETENSORS_CONVERTER(
                      [](const std::string& path, const source_options&) { return open_safetensors_source(path); }),
                  .make_sink = SAFETENSORS_CONVERTER([](const std::string& path, const sink_options& o) {
                    return make_safetensors_sink(path, false, o.layout, o.inputs);
                  }),
                  .describe = {},
                  .takes = {.layout = true}});
  // A directory or an index: never sniffed; open_source and output_format_for choose it by path.
  rows.push_back({.id = "sharded",
                  .name = "SafeTensors (sharded)",
                  .extensions = {},
                  .sniff = {},
                  .open = SAFETENSORS_CONVERTER([](const std::string& path, const source_options& o) {
                    return open_checkpoint_source(path, o.on_warning);
                  }),
                  .make_sink = SAFETENSORS_CONVERTER([](const std::string& path, const sink_options& o) {
                    return make_safetensors_sink(path, true, o.layout, o.inputs);
                  }),
                  .describe = {},
                  .takes = {.layout = true, .shards = true}});
  rows.push_back({.id = "pytorch",
                  .name = "PyTorch",
                  .extensions = {".pt", ".pth", ".bin", ".ckpt"},
                  .sniff = sniffed_as({file_format::pytorch_zip, file_format::pickle}),
                  .open = SAFETENSORS_CONVERTER(open_pytorch_source),
                  .make_sink = {},
                  .describe = detail::describe_pytorch,
                  .takes = {.pytorch_reading = true}});
  rows.push_back({.id = "npz",
                  .name = "NumPy .npz",
                  .extensions = {".npz"},
                  .sniff = sniffed_as({file_format::npz}),
                  .open = SAFETENSORS_CONVERTER(
                      [](const std::string& path, const source_options& o) { return open_numpy_source(path, o.npz); }),
                  .make_sink = SAFETENSORS_CONVERTER([](const std::string& path, const sink_options& o) {
                    return make_npz_sink(path, o.compress, o.on_warning);
                  }),
                  .describe = detail::describe_numpy,
                  .takes = {.npz_limits = true, .compress = true}});
  rows.push_back({.id = "npy",
                  .name = "NumPy .npy",
                  .extensions = {".npy"},
                  .sniff = sniffed_as({file_format::npy}),
                  .open = SAFETENSORS_CONVERTER(
                      [](const std::string& path, const source_options& o) { return open_numpy_source(path, o.npz); }),
                  .make_sink = SAFETENSORS_CONVERTER(
                      [](const std::string& path, const sink_options& o) { return make_npy_sink(path, o.on_warning); }),
                  .describe = detail::describe_numpy,
                  .takes = {}});
  rows.push_back({.id = "gguf",
                  .name = "GGUF",
                  .extensions = {".gguf"},
                  .sniff = sniffed_as({file_format::gguf}),
                  .open = SAFETENSORS_CONVERTER(
                      [](const std::string& path, const source_options&) { return open_gguf_source(path); }),
                  .make_sink = SAFETENSORS_CONVERTER([](const std::string& path, const sink_options& o) {
                    return make_gguf_sink(path, o.hash_long_names);
                  }),
                  .describe = detail::describe_gguf,
                  .takes = {.hash_long_names = true}});
  return rows;
}

/// The rows, built-in ones first. A deque: rows never move, so the pointers handed out stay valid.
struct format_registry {
  std::mutex lock;
  std::deque<format_row> rows = built_in_rows();
};

format_registry& format_rows() {
  static format_registry instance;
  return instance;
}

std::string lowered(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

status register_format(format_row row) {
  if (row.id.empty()) return make_error(error_code::invalid_argument, "a format needs an id");
  auto& r = format_rows();
  const std::lock_guard guard(r.lock);
  if (std::any_of(r.rows.begin(), r.rows.end(), [&](const format_row& f) { return f.id == row.id; })) {
    return make_error(error_code::invalid_argument, fmt::format("a format with id '{}' is registered already", row.id));
  }
  for (auto& e : row.extensions) e = lowered(std::move(e));
  r.rows.push_back(std::move(row));
  return {};
}

std::vector<const format_row*> formats() {
  auto& r = format_rows();
  const std::lock_guard guard(r.lock);
  std::vector<const format_row*> out;
  for (const auto& row : r.rows) out.push_back(&row);
  return out;
}

const format_row* find_format(std::string_view id) {
  for (const format_row* row : formats()) {
    if (row->id == id) return row;
  }
  return nullptr;
}

result<const format_row*> format_of_file(const std::string& path) {
  auto in = readonly_file::open(path);
  if (!in) return std::move(in).err();
  std::vector<std::byte> prefix(static_cast<std::size_t>(std::min<std::uint64_t>(in->size(), sniff_prefix_bytes)));
  if (auto s = in->read_at(0, prefix); !s) return std::move(s).err();
  const auto rows = formats();
  for (const format_row* row : rows) {
    if (row->sniff && row->sniff(prefix)) return row;
  }
  const std::string name = lowered(std::filesystem::path(path).filename().string());
  for (const format_row* row : rows) {
    if (row->sniff) continue;
    for (const auto& extension : row->extensions) {
      if (name.size() > extension.size() && name.ends_with(extension)) return row;
    }
  }
  return static_cast<const format_row*>(nullptr);
}

}  // namespace safetensors::pipeline
