// SPDX-License-Identifier: Apache-2.0
// A PyTorch checkpoint (.pt/.bin, zip or legacy) as `inspect` shows it, or as JSON. Nothing
// in the input is executed: the library's restricted unpickler only describes tensors.
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "format_describers.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/json_text.h"

namespace safetensors::pipeline::detail {
namespace {
namespace st = safetensors;

// At most this many globals are listed one by one (a hostile pickle may name thousands).
constexpr std::size_t listed_globals = 50;

std::string verdict_summary(const st::torch::pickle_verdict& v) {
  switch (v.kind()) {
    case st::torch::pickle_verdict_kind::allowlisted: return "allowlisted globals only";
    case st::torch::pickle_verdict_kind::inert_objects:
      return fmt::format(
          "{} {} outside the allowlist, never loaded (converting skips what they touch; --strict "
          "refuses the file)",
          with_commas(v.globals.size()), v.globals.size() == 1 ? "global" : "globals");
    case st::torch::pickle_verdict_kind::runs_code: break;
  }
  return "refused: this file tries to run code";
}

std::string global_line(const st::torch::pickle_global_use& g) {
  std::string line = fmt::format("{}{}: named {} at byte {} of {} ({}x)", g.runs_code ? "runs code: " : "", g.name,
                                 g.opcode, g.offset, g.pickle, g.times_named);
  if (g.calls != 0) line += fmt::format(", called by {} at byte {} ({}x)", g.first_call, g.first_call_offset, g.calls);
  return line;
}

// The verdict as notes: the summary, then each global outside the allowlist.
void add_verdict_notes(const st::torch::pickle_verdict& v, std::vector<std::string>& notes) {
  notes.push_back("pickle verdict: " + verdict_summary(v));
  for (std::size_t i = 0; i < v.globals.size() && i < listed_globals; ++i) notes.push_back(global_line(v.globals[i]));
  if (v.globals.size() > listed_globals) notes.push_back(fmt::format("... {} more", v.globals.size() - listed_globals));
}

std::string verdict_json(const st::torch::pickle_verdict& v) {
  std::string out = fmt::format(R"({{"kind":{},"globals":[)", st::json_quote(st::torch::pickle_verdict_name(v.kind())));
  for (std::size_t i = 0; i < v.globals.size(); ++i) {
    const auto& g = v.globals[i];
    out +=
        fmt::format(R"({}{{"name":{},"runs_code":{},"pickle":{},"offset":{},"opcode":"{}","times_named":{},"calls":{})",
                    i ? "," : "", st::json_quote(g.name), g.runs_code, st::json_quote(g.pickle), g.offset, g.opcode,
                    g.times_named, g.calls);
    if (g.calls != 0)
      out += fmt::format(R"(,"first_call":"{}","first_call_offset":{})", g.first_call, g.first_call_offset);
    out += '}';
  }
  return out + "]}";
}

// A file that names code to run does not open: its verdict is described, then refused.
result<format_description> refused(const std::string& path, st::error e, description_style style) {
  if (e.code != st::error_code::code_execution) return std::move(e).with_path(path);
  const auto audit = st::torch::audit_checkpoint(path);
  format_description out;
  if (style == description_style::json) {
    out.json = fmt::format(R"({{"format":"pytorch","verdict":{}}})", verdict_json(audit.verdict));
  } else {
    add_verdict_notes(audit.verdict, out.notes);
  }
  out.refusal = std::move(e).with_path(path);
  return out;
}

std::string pytorch_json(const st::torch::checkpoint& c) {
  const char* container = c.container() == st::torch::container_kind::zip ? "zip" : "legacy";
  auto shape_text = [](const std::vector<std::uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); };
  std::string out =
      fmt::format(R"({{"format":"pytorch","container":"{}","big_endian":{},"tensors":[)", container, c.big_endian());
  for (std::size_t i = 0; i < c.tensors().size(); ++i) {
    const auto& t = c.tensors()[i];
    out += fmt::format(R"({}{{"name":{},"dtype":"{}","shape":{},"storage":{},"storage_offset":{},"contiguous":{}}})",
                       i ? "," : "", st::json_quote(t.name), st::dtype_name(t.type), shape_text(t.shape),
                       st::json_quote(c.storages()[t.storage].key), t.storage_offset, t.contiguous());
  }
  out += R"(],"skipped":[)";
  for (std::size_t i = 0; i < c.skipped().size(); ++i) {
    const auto& s = c.skipped()[i];
    out +=
        fmt::format(R"({}{{"name":{},"reason":{}}})", i ? "," : "", st::json_quote(s.name), st::json_quote(s.reason));
  }
  return fmt::format("{}],\"verdict\":{}}}", out, verdict_json(c.verdict()));
}

// Where tensor `index`'s bytes are when they can be read as they are, or why not.
void plain_data(const st::torch::checkpoint& c, std::size_t index, described_tensor& row) {
  const auto& t = c.tensors()[index];
  const auto at = c.file_offset(index);
  if (c.container() != st::torch::container_kind::zip) {
    row.no_data = "a legacy pickle";
  } else if (!at) {
    row.no_data = "a compressed storage";
  } else if (!t.contiguous()) {
    row.no_data = "a strided view";
  } else if (c.big_endian() && st::dtype_bits(t.type) > 8) {
    row.no_data = "big-endian";
  } else {
    row.data = described_tensor::plain_bytes{*at, row.bytes, t.type};
  }
}

}  // namespace

result<format_description> describe_pytorch(const std::string& path, description_style style) {
  auto c = st::torch::checkpoint::open(path);
  if (!c) return refused(path, safetensors::error(c.err()), style);
  format_description out;
  if (style == description_style::json) {
    out.json = pytorch_json(*c);
    return out;
  }
  std::map<std::size_t, std::size_t> users;  // storage -> tensors viewing it
  for (const auto& t : c->tensors()) ++users[t.storage];
  out.format = fmt::format("PyTorch checkpoint ({} container, {}-endian)",
                           c->container() == st::torch::container_kind::zip ? "zip" : "legacy",
                           c->big_endian() ? "big" : "little");
  out.extra_title = "notes";
  for (std::size_t i = 0; i < c->tensors().size(); ++i) {
    const auto& t = c->tensors()[i];
    std::vector<std::string> notes;
    if (!t.contiguous()) notes.emplace_back("strided view");
    if (users[t.storage] > 1) notes.push_back(fmt::format("shares storage {}", c->storages()[t.storage].key));
    const std::uint64_t elements =
        std::accumulate(t.shape.begin(), t.shape.end(), std::uint64_t{1}, std::multiplies<>());
    out.tensors.push_back({t.name,
                           std::string(st::dtype_name(t.type)),
                           t.shape,
                           st::byte_size(t.type, t.shape).bytes,
                           elements,
                           fmt::format("{}", fmt::join(notes, ", ")),
                           {},
                           {}});
    plain_data(*c, i, out.tensors.back());
  }
  for (const auto& s : c->skipped()) out.notes.push_back(fmt::format("skipped {}: {}", s.name, s.reason));
  add_verdict_notes(c->verdict(), out.notes);
  return out;
}

}  // namespace safetensors::pipeline::detail
