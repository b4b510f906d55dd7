// SPDX-License-Identifier: Apache-2.0
// `safetensors stats FILE [TENSOR|GLOB]... [--json] [--quiet]`: min, max, mean, std and
// NaN / infinity / zero counts per tensor, in one streaming pass with bounded memory.
#include <memory>

#include <fmt/format.h>

#include "checkpoint_tensors.h"
#include "command.h"
#include "input.h"
#include "json_util.h"
#include "progress.h"
#include "report.h"
#include "safetensors/pipeline/chunk_cast.h"
#include "safetensors/stats.h"

namespace st_cli {

using safetensors::pipeline::decode_values;
namespace {

struct stats_args {
  std::string file;
  std::vector<std::string> tensors;
  bool json = false;
  bool quiet = false;
};

/// Compact number for the table: up to 6 significant digits.
std::string short_number(double v) { return std::isnan(v) ? "-" : fmt::format("{:.6g}", v); }

run_result run_stats(const stats_args& args) {
  auto c = open_checkpoint_input(args.file);
  if (!c) return std::move(c).err();
  auto chosen = select_checkpoint_tensors(*c, args.tensors, {});
  if (!chosen) return std::move(chosen).err();
  std::uint64_t total = 0;
  for (const auto& t : *chosen) total += t.info->byte_size();

  std::vector<safetensors::tensor_stats> results;
  {
    progress bar("stats", total, !args.quiet);
    std::vector<std::byte> buffer;
    std::vector<double> values;
    for (const shard_tensor& chosen_one : *chosen) {
      const safetensors::file* f = chosen_one.file;
      const safetensors::tensor_info* t = chosen_one.info;
      safetensors::stats_accumulator acc;
      auto s = read_tensor_chunks(
          *f, *t, buffer,
          [&](std::span<const std::byte> chunk) -> safetensors::status {
            if (auto d = decode_values(t->type, chunk, values); !d) {
              safetensors::error e = std::move(d).err();
              e.path = f->path();
              e.tensor = std::string(t->name);
              return e;
            }
            acc.add(values);
            bar.advance(chunk.size());
            return {};
          },
          element_chunk_bytes(t->type));
      if (!s) return std::move(s).err();
      results.push_back(acc.result());
    }
  }

  if (args.json) {
    std::string out = fmt::format(R"({{"file":{},"tensors":[)", safetensors::json_quote(args.file));
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      const auto* t = (*chosen)[i].info;
      if (i > 0) out += ',';
      out += fmt::format(
          R"({{"name":{},"dtype":"{}","shape":[{}],"count":{},"min":{},"max":{},"mean":{},"std":{},"nan":{},"pos_inf":{},"neg_inf":{},"zeros":{}}})",
          safetensors::json_quote(t->name), safetensors::dtype_name(t->type), fmt::join(t->shape, ","), r.count,
          json_number(r.min), json_number(r.max), json_number(r.mean), json_number(r.std), r.nan, r.pos_inf, r.neg_inf,
          r.zeros);
    }
    fmt::print("{}]}}\n", out);
    return exit_ok;
  }
  std::size_t width = 4;
  for (const auto& t : *chosen) width = std::max(width, printable_text(t.info->name).size());
  width = std::min<std::size_t>(width, 60);
  fmt::print("{:<{}}  {:<7}  {:>10}  {:>12}  {:>12}  {:>12}  {:>12}  {:>6}  {:>6}  {:>8}\n", "name", width, "dtype",
             "count", "min", "max", "mean", "std", "nan", "inf", "zeros");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const auto* t = (*chosen)[i].info;
    fmt::print("{:<{}}  {:<7}  {:>10}  {:>12}  {:>12}  {:>12}  {:>12}  {:>6}  {:>6}  {:>8}\n", printable_text(t->name),
               width, safetensors::dtype_name(t->type), r.count, short_number(r.min), short_number(r.max),
               short_number(r.mean), short_number(r.std), r.nan, r.pos_inf + r.neg_inf, r.zeros);
  }
  return exit_ok;
}

const command_registrar stats_registrar{
    "stats", "Per-tensor min, max, mean, std and NaN/Inf/zero counts (one streaming pass)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<stats_args>();
      app.add_option("file", args->file, "SafeTensors file, checkpoint directory or index")->required();
      app.add_option("tensors", args->tensors, "Tensor names or globs (default: all)");
      add_json(app, args->json, "Print a JSON object (non-finite statistics are null)");
      add_quiet(app, args->quiet);
      return [args] { return run_stats(*args); };
    }};

}  // namespace
}  // namespace st_cli
