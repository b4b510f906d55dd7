// SPDX-License-Identifier: Apache-2.0
// `safetensors diff A B [--rtol R] [--atol A] [--json] [--quiet]`: compares names, dtypes,
// shapes, metadata and values (|a - b| <= atol + rtol * |b|, NaN equals NaN, as numpy's
// allclose with equal_nan). Exit 0 equal, 1 different, 2 error.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "count_text.h"
#include "input.h"
#include "json_util.h"
#include "progress.h"
#include "report.h"
#include "values.h"

namespace st_cli {
namespace {

struct diff_args {
  std::string a;
  std::string b;
  double rtol = 0;
  double atol = 0;
  bool json = false;
  bool quiet = false;
  bool ignore_dtype = false;
};

struct meta_difference {
  std::string key;
  std::optional<std::string> a, b;
};

struct tensor_difference {
  const safetensors::tensor_info* a = nullptr;
  const safetensors::tensor_info* b = nullptr;
  bool dtype_differs = false;
  bool dtype_counts = true;  // false with --ignore-dtype: only values decide
  bool shape_differs = false;
  bool compared = false;     // values were compared
  std::uint64_t values = 0;  // values compared (C64: two per element)
  std::uint64_t mismatched = 0;
  double max_abs = 0;
  double max_rel = 0;
  std::uint64_t first_index = 0;
  double first_a = 0, first_b = 0;
  [[nodiscard]] bool differs() const { return (dtype_differs && dtype_counts) || shape_differs || mismatched > 0; }
  [[nodiscard]] bool values_match() const { return compared && mismatched == 0; }
};

/// Compares value chunks, updating the running differences.
void compare_values(const std::vector<double>& va, const std::vector<double>& vb, std::uint64_t base,
                    const diff_args& args, tensor_difference& d) {
  for (std::size_t i = 0; i < va.size(); ++i) {
    const double x = va[i];
    const double y = vb[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    const double abs_err = std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::infinity() : std::fabs(x - y);
    const double rel_err = y == 0 ? std::numeric_limits<double>::infinity() : abs_err / std::fabs(y);
    if (!(abs_err <= args.atol + args.rtol * std::fabs(y))) {
      if (d.mismatched == 0) {
        d.first_index = base + i;
        d.first_a = x;
        d.first_b = y;
      }
      ++d.mismatched;
    }
    d.max_abs = std::max(d.max_abs, abs_err);
    d.max_rel = std::max(d.max_rel, rel_err);
  }
}

/// Reads both tensors in lockstep, element chunk by element chunk.
safetensors::status compare_tensor(const safetensors::file& fa, const safetensors::file& fb, tensor_difference& d,
                                   const diff_args& args, progress& bar) {
  const auto& ta = *d.a;
  const auto& tb = *d.b;
  const std::uint64_t n = ta.element_count();
  const unsigned bits_a = safetensors::dtype_bits(ta.type);
  const unsigned bits_b = safetensors::dtype_bits(tb.type);
  const bool same_type = ta.type == tb.type;
  std::vector<std::byte> ba;
  std::vector<std::byte> bb;
  std::vector<double> va;
  std::vector<double> vb;
  const std::uint64_t per_value = ta.type == safetensors::dtype::C64 ? 2 : 1;
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t k = std::min<std::uint64_t>(n - done, chunk_elements);
    ba.resize(static_cast<std::size_t>(k * bits_a / 8));
    bb.resize(static_cast<std::size_t>(k * bits_b / 8));
    const std::uint64_t off_a = fa.meta().data_start() + ta.begin + done * bits_a / 8;
    const std::uint64_t off_b = fb.meta().data_start() + tb.begin + done * bits_b / 8;
    if (auto s = fa.read_range(off_a, ba); !s) return s;
    if (auto s = fb.read_range(off_b, bb); !s) return s;
    bar.advance(ba.size() + bb.size());
    // Identical bytes mean identical values: skip decoding.
    if (!same_type || std::memcmp(ba.data(), bb.data(), ba.size()) != 0) {
      if (auto s = decode_values(ta.type, ba, va); !s) return s;
      if (auto s = decode_values(tb.type, bb, vb); !s) return s;
      compare_values(va, vb, done * per_value, args, d);
    }
    done += k;
  }
  d.values = n * per_value;
  d.compared = true;
  return {};
}

std::string shape_text(std::span<const std::uint64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

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

  std::vector<meta_difference> meta;
  const safetensors::metadata_map empty;
  const auto& ma = fa->meta().metadata() ? *fa->meta().metadata() : empty;
  const auto& mb = fb->meta().metadata() ? *fb->meta().metadata() : empty;
  for (const auto& [k, v] : ma) {
    const auto it = mb.find(k);
    if (it == mb.end()) {
      meta.push_back({k, v, std::nullopt});
    } else if (it->second != v) {
      meta.push_back({k, v, it->second});
    }
  }
  for (const auto& [k, v] : mb) {
    if (ma.find(k) == ma.end()) meta.push_back({k, std::nullopt, v});
  }

  std::vector<std::string_view> only_a;
  std::vector<std::string_view> only_b;
  std::vector<tensor_difference> common;
  std::uint64_t total = 0;
  for (const auto& t : fa->tensors()) {
    const auto* other = fb->find(t.name);
    if (other == nullptr) {
      only_a.push_back(t.name);
      continue;
    }
    tensor_difference d;
    d.a = &t;
    d.b = other;
    d.dtype_differs = t.type != other->type;
    d.dtype_counts = !args.ignore_dtype;
    d.shape_differs = !std::equal(t.shape.begin(), t.shape.end(), other->shape.begin(), other->shape.end());
    const bool c64_mismatch =
        d.dtype_differs && (t.type == safetensors::dtype::C64 || other->type == safetensors::dtype::C64);
    if (!d.shape_differs && !c64_mismatch) total += t.byte_size() + other->byte_size();
    common.push_back(d);
  }
  for (const auto& t : fb->tensors()) {
    if (fa->find(t.name) == nullptr) only_b.push_back(t.name);
  }

  {
    progress bar("diff", total, !args.quiet);
    for (auto& d : common) {
      const bool c64_mismatch =
          d.dtype_differs && (d.a->type == safetensors::dtype::C64 || d.b->type == safetensors::dtype::C64);
      if (d.shape_differs || c64_mismatch) continue;
      if (auto s = compare_tensor(*fa, *fb, d, args, bar); !s) {
        bar.finish();
        safetensors::error e = std::move(s).err();
        if (!e.tensor) e.tensor = std::string(d.a->name);
        return e;
      }
    }
  }

  std::size_t differing = 0;
  for (const auto& d : common) {
    if (d.differs()) ++differing;
  }
  const bool equal = meta.empty() && only_a.empty() && only_b.empty() && differing == 0;

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
          safetensors::json_quote(d.a->name), !d.differs(), d.compared ? (d.values_match() ? "true" : "false") : "null",
          safetensors::dtype_name(d.a->type), safetensors::dtype_name(d.b->type), fmt::join(d.a->shape, ","),
          fmt::join(d.b->shape, ","), d.compared, d.values, d.mismatched, d.compared ? json_number(d.max_abs) : "null",
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
  for (auto name : only_a) fmt::print("only in A: {}\n", name);
  for (auto name : only_b) fmt::print("only in B: {}\n", name);
  for (const auto& d : common) {
    if (d.shape_differs) {
      fmt::print("shape differs: {}: {} vs {}\n", d.a->name, shape_text(d.a->shape), shape_text(d.b->shape));
    }
    if (d.dtype_differs) {
      // Across a cast the question is whether the values survived it: say so either way.
      const std::string values = !d.compared ? "" : d.values_match() ? ", values match" : ", values differ";
      fmt::print("dtype {}: {}: {} vs {}{}\n", d.dtype_counts ? "differs" : "ignored", d.a->name,
                 safetensors::dtype_name(d.a->type), safetensors::dtype_name(d.b->type), values);
    }
    if (d.mismatched > 0) {
      fmt::print(
          "values differ: {}: {} of {} values, max abs error {:.6g}, max rel error {:.6g} (first at index {}: "
          "{:.9g} vs {:.9g})\n",
          d.a->name, d.mismatched, d.values, d.max_abs, d.max_rel, d.first_index, d.first_a, d.first_b);
    }
  }
  std::size_t compared = 0;
  std::size_t values_differ = 0;
  std::size_t dtype_changes = 0;
  for (const auto& d : common) {
    if (d.compared) ++compared;
    if (d.compared && !d.values_match()) ++values_differ;
    if (d.dtype_differs) ++dtype_changes;
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

const command_registrar registrar{
    "diff", "Compare two files: names, dtypes, shapes, metadata, values (exit 0 equal, 1 different)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<diff_args>();
      app.add_option("a", args->a, "First SafeTensors file (A)")->required();
      app.add_option("b", args->b, "Second SafeTensors file (B, the reference for --rtol)")->required();
      app.add_option("--rtol", args->rtol, "Relative tolerance (default 0)");
      app.add_option("--atol", args->atol, "Absolute tolerance (default 0)");
      app.add_flag("--json", args->json, "Print one JSON object");
      app.add_flag("--ignore-dtype", args->ignore_dtype,
                   "Compare values across a cast: a dtype change alone is no difference (see --rtol/--atol)");
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      return [args] { return run_diff(*args); };
    }};

}  // namespace
}  // namespace st_cli
