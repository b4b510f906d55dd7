// SPDX-License-Identifier: Apache-2.0
// `safetensors inspect FILE [--tree [--depth N]] [--json]`: summary, per-dtype totals,
// tensor table with the alignment of each tensor's data, or a tree of name groups.
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "checkpoint_tensors.h"
#include "command.h"
#include "count_text.h"
#include "input.h"
#include "json_util.h"
#include "mlx_summary.h"
#include "progress.h"
#include "report.h"
#include "safetensors/file.h"
#include "safetensors/json_text.h"
#include "safetensors/pipeline/format_table.h"
#include "tensor_table.h"
#include "tree.h"

namespace st_cli {
namespace {

namespace sp = safetensors::pipeline;

/// Largest power of two (up to 4096) that divides `offset`.
std::uint64_t alignment_of(std::uint64_t offset) {
  std::uint64_t a = 1;
  while (a < 4096 && offset % (a * 2) == 0) a *= 2;
  return a;
}

/// The alignment a tensor's data needs for direct use: its element size (1 for sub-byte types).
std::uint64_t required_alignment(safetensors::dtype t) { return std::max(1U, safetensors::dtype_bits(t) / 8); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// "MLX quantized (N weights)" when the file follows MLX's layout, else empty.
std::string detect_layout(const safetensors::header& h) {
  std::size_t quantized = 0;
  for (const auto& t : h.tensors()) {
    if (!ends_with(t.name, ".scales")) continue;
    const std::string stem(t.name.substr(0, t.name.size() - 7));
    if (h.find(stem + ".weight") != nullptr && h.find(stem + ".weight")->type == safetensors::dtype::U32) ++quantized;
  }
  const bool mlx_meta = h.metadata() && h.metadata()->count("format") != 0 && h.metadata()->at("format") == "mlx";
  if (quantized > 0) return fmt::format("MLX quantized ({} packed U32 weights with .scales)", quantized);
  if (mlx_meta) return "MLX (format = mlx)";
  return {};
}

void print_summary(const std::string& path, const safetensors::header& h, std::uint64_t file_size) {
  const param_overrides overrides = logical_param_overrides(path, h);
  struct totals {
    std::uint64_t tensors = 0, params = 0, bytes = 0;
  };
  std::map<safetensors::dtype, totals> per_dtype;
  std::uint64_t params = 0;
  std::size_t misaligned = 0;
  std::uint64_t min_alignment = 4096;
  for (const auto& t : h.tensors()) {
    params += param_count(overrides, t);
    auto& d = per_dtype[t.type];
    ++d.tensors;
    d.params += param_count(overrides, t);
    d.bytes += t.byte_size();
    const std::uint64_t offset = h.data_start() + t.begin;
    if (offset % required_alignment(t.type) != 0) ++misaligned;
    if (t.byte_size() > 0) min_alignment = std::min(min_alignment, alignment_of(offset));
  }
  fmt::print("file:        {}\n", printable_text(path));
  fmt::print("size:        {} ({})\n", human_bytes(file_size), count_of(file_size, "byte"));
  fmt::print("header:      {}, data starts at byte {} (aligned to {})\n", count_of(h.header_length(), "byte"),
             with_commas(h.data_start()), alignment_of(h.data_start()));
  const std::string layout = detect_layout(h);
  if (!layout.empty()) fmt::print("layout:      {}\n", layout);
  fmt::print("tensors:     {}\n", with_commas(h.tensors().size()));
  fmt::print("parameters:  {}\n", with_commas(params));
  for (const auto& [type, d] : per_dtype) {
    fmt::print("  {:<12} {:>6} {:<7} {:>14} params  {:>12}\n", safetensors::dtype_name(type), with_commas(d.tensors),
               d.tensors == 1 ? "tensor" : "tensors", with_commas(d.params), human_bytes(d.bytes));
  }
  if (misaligned > 0) {
    fmt::print("alignment:   {} not aligned to their element size (marked !)\n", count_of(misaligned, "tensor"));
  } else if (!h.tensors().empty()) {
    fmt::print("alignment:   every tensor aligned to its element size (all data at least {}-byte aligned)\n",
               min_alignment);
  }
  if (h.metadata()) {
    fmt::print("metadata:\n");
    for (const auto& [k, v] : *h.metadata()) fmt::print("  {}: {}\n", printable_text(k), printable_text(v));
  } else {
    fmt::print("metadata:    none\n");
  }
  std::vector<table_row> rows;
  for (const auto& t : h.tensors()) {
    const std::uint64_t offset = h.data_start() + t.begin;
    const bool bad = offset % required_alignment(t.type) != 0;
    rows.push_back(
        {{std::string(t.name), std::string(safetensors::dtype_name(t.type)),
          std::vector<std::uint64_t>(t.shape.begin(), t.shape.end()), t.byte_size(), param_count(overrides, t)},
         fmt::format("{:>5}{}  [{}, {}]", alignment_of(offset), bad ? "!" : " ", with_commas(t.begin),
                     with_commas(t.end))});
  }
  print_tensor_table(rows, fmt::format("{:>6}  {}", "align", "data_offsets"));
}

struct inspect_args {
  std::string file;
  bool json = false;
  bool tree = false;
  int depth = -1;
};

/// A file the format table describes (PyTorch, NumPy, GGUF, ...) as `style` asks; nullopt for
/// anything else (SafeTensors files and checkpoints, read as such, and what no row claims).
std::optional<safetensors::result<sp::format_description>> described(const std::string& path,
                                                                     sp::description_style style) {
  if (is_checkpoint_path(path)) return std::nullopt;
  auto row = sp::format_of_file(path);
  if (!row || *row == nullptr || !(*row)->describe) return std::nullopt;
  return (*row)->describe(path, style);
}

/// inspect of a described file: its rows (or JSON), then its refusal if it does not open.
run_result inspect_described(const std::string& path, const sp::format_description& d, bool json) {
  if (json) {
    fmt::print("{}\n", d.json);
  } else if (d.refusal) {
    for (const auto& note : d.notes) fmt::print("note:        {}\n", printable_text(note));
  } else {
    print_listing(path, d);
  }
  if (d.refusal) return *d.refusal;
  return exit_ok;
}

/// --tree of any file the table reads, or a whole checkpoint: every shard's tensors in one tree.
run_result inspect_tree(const inspect_args& args) {
  std::vector<tree_tensor> tensors;
  if (auto listing = described(args.file, sp::description_style::rows)) {
    if (!*listing) return std::move(*listing).err();
    if ((*listing)->refusal) return *(*listing)->refusal;
    for (auto& row : described_rows(**listing)) tensors.push_back(std::move(row.tensor));
  } else {
    auto c = open_checkpoint_input(args.file);
    if (!c) return std::move(c).err();
    for (const auto& shard : c->shards()) {
      const param_overrides overrides = logical_param_overrides(shard.file.path(), shard.file.header());
      for (const auto& t : shard.file.tensors()) {
        tensors.push_back({std::string(t.name), std::string(safetensors::dtype_name(t.type)),
                           std::vector<std::uint64_t>(t.shape.begin(), t.shape.end()), t.byte_size(),
                           param_count(overrides, t)});
      }
    }
  }
  const name_tree tree = build_name_tree(tensors);
  if (args.json) {
    fmt::print("{}\n", name_tree_json(tree));
  } else {
    print_name_tree(tree, args.depth);
  }
  return exit_ok;
}

run_result run_inspect(const inspect_args& args) {
  if (args.depth < -1) {
    return usage_error("--depth must be >= 0");
  }
  if (args.depth >= 0 && !args.tree) return usage_error("--depth applies to --tree only");
  if (args.tree) return inspect_tree(args);
  if (is_checkpoint_path(args.file)) return inspect_checkpoint(args.file, args.json);
  if (auto d = described(args.file, args.json ? sp::description_style::json : sp::description_style::rows)) {
    if (!*d) return std::move(*d).err();
    return inspect_described(args.file, **d, args.json);
  }
  auto f = open_input(args.file);
  if (!f) return std::move(f).err();
  if (args.json) {
    fmt::print("{}\n", safetensors::header_to_display_json(f->header()));
  } else {
    print_summary(args.file, f->header(), f->file_size());
    print_mlx_summary(args.file, f->header());
  }
  return exit_ok;
}

const command_registrar inspect_registrar{
    "inspect", "Summarise a file: tensors, dtypes, parameters, alignment, metadata", [](CLI::App& app) -> runner {
      auto args = std::make_shared<inspect_args>();
      app.add_option("file", args->file, "SafeTensors file, checkpoint directory or index; PyTorch, NumPy or GGUF file")
          ->required();
      add_json(app, args->json, "Print the parsed header as JSON (with --tree: the tree as JSON)");
      app.add_flag("--tree", args->tree, "Group tensors by dotted name prefix, with parameter counts per group");
      app.add_option("--depth", args->depth, "With --tree: show groups down to this depth only (default: all)");
      return [args] { return run_inspect(*args); };
    }};

}  // namespace
}  // namespace st_cli
