// SPDX-License-Identifier: Apache-2.0
// `inspect` of NumPy files (.npy, .npz): their arrays, descr and layout.
#include <functional>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "foreign_formats.h"
#include "json_util.h"
#include "report.h"
#include "safetensors/formats/numpy_file.h"

namespace st_cli {

safetensors::result<file_listing> list_numpy(const std::string& path) {
  auto in = safetensors::numpy::numpy_file::open(path);
  if (!in) return std::move(in).err();
  file_listing out;
  out.format = in->is_npz() ? "NumPy .npz" : "NumPy .npy";
  out.extra_title = "descr";
  for (const auto& a : in->arrays()) {
    const auto& h = *a.header;
    const std::uint64_t elements =
        std::accumulate(h.shape.begin(), h.shape.end(), std::uint64_t{1}, std::multiplies<>());
    out.rows.push_back({{a.name, std::string(safetensors::dtype_name(h.type)), h.shape, h.data_bytes, elements},
                        h.descr + (h.fortran_order ? " (fortran order)" : "")});
  }
  return out;
}

run_result inspect_numpy(const std::string& path, bool json) {
  if (!json) {
    auto listing = list_numpy(path);
    if (!listing) return std::move(listing).err();
    print_listing(path, *listing);
    return exit_ok;
  }
  auto in = safetensors::numpy::numpy_file::open(path);
  if (!in) return std::move(in).err();
  std::uint64_t total = 0;
  for (const auto& a : in->arrays()) total += a.header->data_bytes;
  std::string out = fmt::format("{{\"format\":\"{}\",\"arrays\":[", in->is_npz() ? "npz" : "npy");
  bool first = true;
  for (const auto& a : in->arrays()) {
    const auto& h = *a.header;
    out += fmt::format(
        "{}{{\"name\":{},\"dtype\":\"{}\",\"descr\":{},\"shape\":[{}],\"bytes\":{},"
        "\"fortran_order\":{},\"version\":\"{}.{}\"}}",
        first ? "" : ",", safetensors::json_quote(a.name), safetensors::dtype_name(h.type),
        safetensors::json_quote(h.descr), fmt::join(h.shape, ","), h.data_bytes, h.fortran_order ? "true" : "false",
        h.major_version, h.minor_version);
    first = false;
  }
  fmt::print("{}],\"total_bytes\":{}}}\n", out, total);
  return exit_ok;
}

}  // namespace st_cli
