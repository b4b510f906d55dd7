// SPDX-License-Identifier: Apache-2.0
// `inspect` of NumPy files (.npy, .npz): their arrays, descr and layout.
#include <filesystem>
#include <numeric>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "foreign_formats.h"
#include "json_util.h"
#include "report.h"
#include "safetensors/formats/npy.h"
#include "safetensors/formats/npz.h"
#include "safetensors/sniff.h"

namespace st_cli {
namespace {

// The arrays of an .npy or .npz file, for listing.
class numpy_input {
 public:
  struct array {
    std::string name;
    const safetensors::numpy::npy_header* header = nullptr;
  };

  static safetensors::result<numpy_input> open(const std::string& path) {
    auto format = safetensors::sniff_file(path);
    if (!format) return std::move(format).err();
    numpy_input in;
    if (*format == safetensors::file_format::npy) {
      auto npy = safetensors::numpy::npy_file::open(path);
      if (!npy) return std::move(npy).err();
      in.npy_.emplace(std::move(*npy));
      in.arrays_.push_back({std::filesystem::path(path).stem().string(), &in.npy_->header()});
      return in;
    }
    auto npz = safetensors::numpy::npz_archive::open(path);
    if (!npz) return std::move(npz).err();
    in.npz_.emplace(std::move(*npz));
    for (const auto& a : in.npz_->arrays()) in.arrays_.push_back({a.name, &a.header});
    return in;
  }

  [[nodiscard]] const std::vector<array>& arrays() const { return arrays_; }
  [[nodiscard]] bool is_npz() const { return npz_.has_value(); }

 private:
  std::optional<safetensors::numpy::npy_file> npy_;
  std::optional<safetensors::numpy::npz_archive> npz_;
  std::vector<array> arrays_;
};

}  // namespace

safetensors::result<file_listing> list_numpy(const std::string& path) {
  auto in = numpy_input::open(path);
  if (!in) return safetensors::error(in.err()).with_path(path);
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
  auto in = numpy_input::open(path);
  if (!in) return safetensors::error(in.err()).with_path(path);
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
