// SPDX-License-Identifier: Apache-2.0
// `safetensors diff A B [--rtol R] [--atol A] [--json] [--quiet]`: compares names, dtypes,
// shapes, metadata and values (|a - b| <= atol + rtol * |b|, NaN equals NaN, as numpy's
// allclose with equal_nan) with the library's pipeline::diff, and prints its report.
// Exit 0 equal, 1 different, 2 error.
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "count_text.h"
#include "input.h"
#include "json_util.h"
#include "progress.h"
#include "report.h"
#include "safetensors/pipeline/diff.h"

namespace st_cli {
namespace {

namespace sp = safetensors::pipeline;

struct diff_args {
  std::string a;
  std::string b;
  double rtol = 0;
  double atol = 0;
  bool json = false;
  bool quiet = false;
  bool ignore_dtype = false;
};

std::string opt_json(const std::optional<std::string>& s) {
  return s ? safetensors::json_quote(*s) : std::string("null");
}

run_result run_diff(const diff_args& args) {
  if (!(args.rtol >= 0) || !(args.atol >= 0)) {
    return usage_error("--rtol and --atol must be numbers >= 0");
  }
  auto fa = open_input(args.a);
  if (!fa) return std::move(fa).err();
  auto fb = open_input(args.b);
  if (!fb) return std::move(fb).err();

  sp::diff_options options;
  options.rtol = args.rtol;
  options.atol = args.atol;
  options.ignore_dtype = args.ignore_dtype;
  pipeline_progress bar("diff", args.quiet);
  options.progress = bar.callback();
  auto outcome = sp::diff(*fa, *fb, options);
  bar.finish();
  if (!outcome) return std::move(outcome).err();
  const sp::diff_report& report = *outcome;
  const auto& meta = report.metadata;
  const auto& only_a = report.only_in_a;
  const auto& only_b = report.only_in_b;
  const auto& common = report.tensors;
  const std::size_t differing = report.differing();
  const bool equal = report.equal();

  if (args.json) {
    std::string out = fmt::format(R"({{"a":{},"b":{},"equal":{},"only_in_a":{},"only_in_b":{},"metadata":[)",
                                  safetensors::json_quote(args.a), safetensors::json_quote(args.b), equal,
                                  json_string_array(only_a), json_string_array(only_b));
    for (std::size_t i = 0; i < meta.size(); ++i) {
      if (i > 0) out += ',';
      out += fmt::format(R"({{"key":{},"a":{},"b":{}}})", safetensors::json_quote(meta[i].key), opt_json(meta[i].a),
                         opt_json(meta[i].b));
    }
    out += R"(],"tensors":[)";
    for (std::size_t i = 0; i < common.size(); ++i) {
      const auto& d = common[i];
      if (i > 0) out += ',';
      out += fmt::format(
          R"({{"name":{},"equal":{},"values_equal":{},"dtype_a":"{}","dtype_b":"{}","shape_a":[{}],"shape_b":[{}],"compared":{},"values":{},"mismatched":{},"max_abs":{},"max_rel":{}}})",
          safetensors::json_quote(d.name), !d.differs(), d.compared ? (d.values_match() ? "true" : "false") : "null",
          safetensors::dtype_name(d.type_a), safetensors::dtype_name(d.type_b), fmt::join(d.shape_a, ","),
          fmt::join(d.shape_b, ","), d.compared, d.values, d.mismatched, d.compared ? json_number(d.max_abs) : "null",
          d.compared ? json_number(d.max_rel) : "null");
    }
    fmt::print("{}]}}\n", out);
    return equal ? exit_ok : exit_failed;
  }

  for (const auto& m : meta) {
    if (!m.b) {
      fmt::print("metadata: key {} only in A\n", safetensors::json_quote(m.key));
    } else if (!m.a) {
      fmt::print("metadata: key {} only in B\n", safetensors::json_quote(m.key));
    } else {
      fmt::print("metadata: key {} differs: {} vs {}\n", safetensors::json_quote(m.key), safetensors::json_quote(*m.a),
                 safetensors::json_quote(*m.b));
    }
  }
  for (auto name : only_a) fmt::print("only in A: {}\n", printable_text(name));
  for (auto name : only_b) fmt::print("only in B: {}\n", printable_text(name));
  for (const auto& d : common) {
    if (d.shape_differs()) {
      fmt::print("shape differs: {}: {} vs {}\n", printable_text(d.name), shape_text(d.shape_a), shape_text(d.shape_b));
    }
    if (d.dtype_differs()) {
      // Across a cast the question is whether the values survived it: say so either way.
      const std::string values = !d.compared ? "" : d.values_match() ? ", values match" : ", values differ";
      fmt::print("dtype {}: {}: {} vs {}{}\n", d.dtype_counts ? "differs" : "ignored", printable_text(d.name),
                 safetensors::dtype_name(d.type_a), safetensors::dtype_name(d.type_b), values);
    }
    if (d.mismatched > 0) {
      fmt::print(
          "values differ: {}: {} of {} values, max abs error {:.6g}, max rel error {:.6g} (first at index {}: "
          "{:.9g} vs {:.9g})\n",
          printable_text(d.name), d.mismatched, d.values, d.max_abs, d.max_rel, d.first_index, d.first_a, d.first_b);
    }
  }
  std::size_t compared = 0;
  std::size_t values_differ = 0;
  std::size_t dtype_changes = 0;
  for (const auto& d : common) {
    if (d.compared) ++compared;
    if (d.compared && !d.values_match()) ++values_differ;
    if (d.dtype_differs()) ++dtype_changes;
  }
  const std::string values =
      compared == 0 ? std::string("no values compared")
      : values_differ == 0
          ? fmt::format("values match ({} compared)", count_of(compared, "tensor"))
          : fmt::format("values differ in {} of {} compared", with_commas(values_differ), count_of(compared, "tensor"));
  const auto verb = [](std::size_t n) { return n == 1 ? "differs" : "differ"; };
  if (equal) {
    fmt::print("equal: {}, metadata identical", count_of(common.size(), "tensor"));
    if (dtype_changes > 0) fmt::print(" ({} ignored, values match)", count_of(dtype_changes, "dtype change"));
    fmt::print("\n");
  } else {
    fmt::print("different: {} of {} in common {}, {} only in A, {} only in B, {} {}; {}\n",
               count_of(differing, "tensor"), with_commas(common.size()), verb(differing), with_commas(only_a.size()),
               with_commas(only_b.size()), count_of(meta.size(), "metadata key"), verb(meta.size()), values);
  }
  return equal ? exit_ok : exit_failed;
}

const command_registrar diff_registrar{
    "diff", "Compare two files: names, dtypes, shapes, metadata, values (exit 0 equal, 1 different)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<diff_args>();
      app.add_option("a", args->a, "First SafeTensors file (A)")->required();
      app.add_option("b", args->b, "Second SafeTensors file (B, the reference for --rtol)")->required();
      app.add_option("--rtol", args->rtol, "Relative tolerance (default 0)");
      app.add_option("--atol", args->atol, "Absolute tolerance (default 0)");
      add_json(app, args->json, "Print one JSON object");
      app.add_flag("--ignore-dtype", args->ignore_dtype,
                   "Compare values across a cast: a dtype change alone is no difference (see --rtol/--atol)");
      add_quiet(app, args->quiet);
      return [args] { return run_diff(*args); };
    }};

}  // namespace
}  // namespace st_cli
