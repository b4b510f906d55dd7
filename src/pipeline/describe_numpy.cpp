// SPDX-License-Identifier: Apache-2.0
// A NumPy file (.npy, .npz) as `inspect` shows it: its arrays, descr and layout; or as JSON.
#include <functional>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format_describers.h"
#include "safetensors/formats/numpy_file.h"
#include "safetensors/json_text.h"

namespace safetensors::pipeline::detail {
namespace {

std::string numpy_json(const numpy::numpy_file& in) {
  std::uint64_t total = 0;
  for (const auto& a : in.arrays()) total += a.header->data_bytes;
  std::string out = fmt::format("{{\"format\":\"{}\",\"arrays\":[", in.is_npz() ? "npz" : "npy");
  bool first = true;
  for (const auto& a : in.arrays()) {
    const auto& h = *a.header;
    out += fmt::format(
        "{}{{\"name\":{},\"dtype\":\"{}\",\"descr\":{},\"shape\":[{}],\"bytes\":{},"
        "\"fortran_order\":{},\"version\":\"{}.{}\"}}",
        first ? "" : ",", json_quote(a.name), dtype_name(h.type), json_quote(h.descr), fmt::join(h.shape, ","),
        h.data_bytes, h.fortran_order ? "true" : "false", h.major_version, h.minor_version);
    first = false;
  }
  return fmt::format("{}],\"total_bytes\":{}}}", out, total);
}

}  // namespace

result<format_description> describe_numpy(const std::string& path, description_style style) {
  auto in = numpy::numpy_file::open(path);
  if (!in) return std::move(in).err();
  format_description out;
  if (style == description_style::json) {
    out.json = numpy_json(*in);
    return out;
  }
  out.format = in->is_npz() ? "NumPy .npz" : "NumPy .npy";
  out.extra_title = "descr";
  for (const auto& a : in->arrays()) {
    const auto& h = *a.header;
    const std::uint64_t elements =
        std::accumulate(h.shape.begin(), h.shape.end(), std::uint64_t{1}, std::multiplies<>());
    out.tensors.push_back({a.name,
                           std::string(dtype_name(h.type)),
                           h.shape,
                           h.data_bytes,
                           elements,
                           h.descr + (h.fortran_order ? " (fortran order)" : ""),
                           {},
                           {}});
    auto& row = out.tensors.back();
    const auto at = in->data_offset(a);
    if (!at) {
      row.no_data = "a deflated .npz member";
    } else if (h.needs_transpose()) {
      row.no_data = "Fortran order";
    } else if (h.big_endian) {
      row.no_data = "big-endian";
    } else {
      row.data = described_tensor::plain_bytes{*at, h.data_bytes, h.type};
    }
  }
  return out;
}

}  // namespace safetensors::pipeline::detail
