// SPDX-License-Identifier: Apache-2.0
// The per-file tasks of safetensors.batch (python/safetensors/batch.py) that the other
// bindings do not cover: a validation verdict as the CLI's `validate --json` gives it, an
// inspect summary of any input format, and checksum/convert of a URL. Each runs without the
// GIL, so a Dask worker's threads run them in parallel; a bad input is a verdict, never an exception.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "buffers.h"
#include "convert_options.h"
#include "errors.h"
#include "remote_options.h"
#include "safetensors/checkpoint.h"
#include "safetensors/file.h"
#include "safetensors/location.h"
#include "safetensors/pipeline/checksum.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/pipeline/tensor_source.h"
#include "safetensors/sniff.h"

namespace py = pybind11;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

namespace st_python {
namespace {

/// What `input` names (location.h), with the remote settings of a URL.
st::result<st::location> batch_resolve(const std::string& input, const py::dict& remote) {
  const auto o = remote_options(remote);
  py::gil_scoped_release release;
  return st::location::resolve(input, o);
}

py::object text_or_none(const std::optional<std::string>& s) { return s ? py::object(py::str(*s)) : py::none(); }

/// An error as the CLI's JSON shows it (code name, message, offset, tensor).
py::dict error_dict(const st::error& e) {
  py::dict d;
  d["ok"] = false;
  d["code"] = std::string(st::error_code_name(e.code));
  d["message"] = e.message;
  d["offset"] = e.offset ? py::cast(*e.offset) : py::none();
  d["tensor"] = text_or_none(e.tensor);
  d["path"] = text_or_none(e.path);
  return d;
}

/// `validate --json`'s verdict: read_header (of a path or URL), a length-prefix error explained.
py::dict batch_validate(const std::string& input, const std::string& policy, const py::dict& remote) {
  const auto options = parse_options_for(policy);
  auto at = batch_resolve(input, remote);
  if (!at) return error_dict(at.err());
  std::optional<st::result<st::header>> header;
  {
    py::gil_scoped_release release;
    header.emplace(at->read_header(options));
    if (!*header && at->is_local()) header.emplace(st::explain_format_error(std::move(*header).err()));
  }
  if (!*header) return error_dict(header->err());
  py::dict d;
  d["ok"] = true;
  d["code"] = py::none();
  d["message"] = py::none();
  d["offset"] = py::none();
  d["tensor"] = py::none();
  py::list warnings;
  for (const auto& w : (*header)->warnings()) warnings.append(w.message);
  d["warnings"] = warnings;
  d["tensors"] = (*header)->tensors().size();
  d["bytes"] = (*header)->data_start() + (*header)->data_size();
  return d;
}

/// What inspect counts, per dtype and in all.
struct totals {
  std::uint64_t tensors = 0;
  std::uint64_t parameters = 0;
  std::uint64_t bytes = 0;
  void add(std::uint64_t elements, std::uint64_t size) {
    ++tensors;
    parameters += elements;
    bytes += size;
  }
};

struct inspect_summary {
  std::string format;
  totals all;
  std::map<std::string, totals> per_dtype;
  std::optional<std::string> metadata_format;
  std::size_t shards = 1;
  std::vector<std::string> notes;
};

std::uint64_t elements_of(std::span<const std::uint64_t> shape) {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

inspect_summary summary_of(const st::checkpoint& c) {
  inspect_summary s;
  s.format = c.sharded() ? "SafeTensors (sharded)" : "SafeTensors";
  s.shards = c.shards().size();
  for (const auto& t : c.tensors()) {
    const std::uint64_t n = elements_of(t.info->shape);
    s.all.add(n, t.info->byte_size());
    s.per_dtype[std::string(st::dtype_name(t.info->type))].add(n, t.info->byte_size());
  }
  const auto format_in = [](const st::metadata_map& m) -> std::optional<std::string> {
    const auto found = m.find("format");
    return found == m.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
  s.metadata_format = format_in(c.index_metadata());
  if (!s.metadata_format && !c.shards().empty() && c.shards().front().file.header().metadata()) {
    s.metadata_format = format_in(*c.shards().front().file.header().metadata());
  }
  return s;
}

inspect_summary summary_of(const sp::tensor_source& source) {
  inspect_summary s;
  s.format = source.format();
  for (const auto& t : source.tensors()) {
    s.all.add(t.element_count(), t.byte_size());
    s.per_dtype[std::string(st::dtype_name(t.type))].add(t.element_count(), t.byte_size());
  }
  if (source.metadata()) {
    const auto found = source.metadata()->find("format");
    if (found != source.metadata()->end()) s.metadata_format = found->second;
  }
  s.notes = source.notes();
  return s;
}

/// A local input: SafeTensors files, indexes and directories as a checkpoint, other formats as
/// the converter reads them (their tensors listed, no data read).
st::result<inspect_summary> inspect_local(const std::string& path, const st::parse_options& parse) {
  auto format = st::sniff_file(path);
  // An index (JSON) or a directory is a SafeTensors checkpoint; sniffing a directory fails.
  const bool checkpoint_like = !format || *format == st::file_format::safetensors || path.ends_with(".json");
  if (checkpoint_like) {
    st::checkpoint_options options;
    options.shard.parse = parse;
    auto c = st::checkpoint::open(path, options);
    if (!c) {
      if (!format) return std::move(format).err();
      return st::explain_format_error(std::move(c).err());
    }
    return summary_of(*c);
  }
  auto source = sp::open_source(path);
  if (!source) return std::move(source).err();
  return summary_of(**source);
}

py::dict summary_dict(const inspect_summary& s) {
  const auto totals_dict = [](const totals& t) {
    py::dict d;
    d["tensors"] = t.tensors;
    d["parameters"] = t.parameters;
    d["bytes"] = t.bytes;
    return d;
  };
  py::dict dtypes;
  for (const auto& [name, t] : s.per_dtype) dtypes[py::str(name)] = totals_dict(t);
  py::dict d = totals_dict(s.all);
  d["ok"] = true;
  d["format"] = s.format;
  d["dtypes"] = dtypes;
  d["metadata_format"] = text_or_none(s.metadata_format);
  d["shards"] = s.shards;
  d["notes"] = s.notes;
  return d;
}

py::dict batch_inspect(const std::string& input, const std::string& policy, const py::dict& remote) {
  const st::parse_options parse = parse_options_for(policy);
  auto at = batch_resolve(input, remote);
  if (!at) return error_dict(at.err());
  std::optional<st::result<inspect_summary>> summary;
  {
    py::gil_scoped_release release;
    if (at->is_local()) {
      summary.emplace(inspect_local(at->path(), parse));
    } else {
      st::checkpoint_options options;
      options.shard.parse = parse;
      auto c = at->open_checkpoint(options);
      summary.emplace(c ? st::result<inspect_summary>(summary_of(*c))
                        : st::result<inspect_summary>(std::move(c).err()));
    }
  }
  if (!*summary) return error_dict(summary->err());
  return summary_dict(**summary);
}

/// The bytes of a URL: a file:// URL is its local file, anything else its store's reads.
py::dict batch_checksum_url(const std::string& url, bool per_tensor, const py::dict& remote) {
  auto at = batch_resolve(url, remote);
  if (!at) return error_dict(at.err());
  auto digest = [&]() -> st::result<sp::file_digest> {
    py::gil_scoped_release release;
    sp::checksum_options options;
    options.per_tensor = per_tensor;
    if (at->is_local()) return sp::checksum(at->path(), options);
    auto bytes = at->open_sequential();
    if (!bytes) return std::move(bytes).err();
    return sp::checksum(*bytes->reader, options);
  }();
  if (!digest) return error_dict(digest.err());
  py::dict tensors;  // in file order
  for (const auto& t : digest->tensors) tensors[py::str(t.name)] = t.sha256;
  py::dict out;
  out["ok"] = true;
  out["sha256"] = digest->sha256;
  out["bytes"] = digest->bytes;
  out["tensors"] = tensors;
  return out;
}

/// A SafeTensors file by URL converted into `out` (the options as safetensors.cxx.convert's).
py::dict batch_convert_url(const std::string& url, const std::string& out, const py::dict& given,
                           const py::dict& remote) {
  auto at = batch_resolve(url, remote);
  if (!at) return error_dict(at.err());
  sp::convert_options options = convert_options_from(given);
  auto summary = [&]() -> st::result<sp::convert_summary> {
    py::gil_scoped_release release;
    st::open_options open;
    open.backend = st::io_backend::pread;
    auto f = at->open_file(open);
    if (!f) return std::move(f).err();
    return sp::convert(sp::safetensors_source(std::move(f).value()), out, options);
  }();
  if (!summary) return error_dict(summary.err());
  py::dict d;
  d["ok"] = true;
  d["input_format"] = summary->input_format;
  d["output_format"] = summary->output->name;
  d["tensors"] = summary->tensors;
  d["parameters"] = summary->parameters;
  d["bytes"] = summary->bytes;
  d["notes"] = summary->notes;
  d["warnings"] = summary->warnings;
  d["files"] = summary->files;
  return d;
}

}  // namespace

void bind_batch(py::module_& m) {
  m.def("batch_validate", &batch_validate, py::arg("input"), py::arg("policy"), py::arg("remote"),
        "validate --json's verdict on a path or URL: {'ok', 'code', 'message', 'offset', 'tensor', ...}.");
  m.def("batch_inspect", &batch_inspect, py::arg("input"), py::arg("policy"), py::arg("remote"),
        "A summary of any input (tensors, parameters and bytes in all and per dtype, metadata format, shards), "
        "or {'ok': False, 'code', 'message', ...}.");
  m.def("batch_checksum_url", &batch_checksum_url, py::arg("url"), py::arg("per_tensor"), py::arg("remote"));
  m.def("batch_convert_url", &batch_convert_url, py::arg("url"), py::arg("output"), py::arg("options"),
        py::arg("remote"));
}

}  // namespace st_python
