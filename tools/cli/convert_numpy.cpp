// SPDX-License-Identifier: Apache-2.0
// `convert` between SafeTensors and NumPy (.npy, .npz), and `inspect` of NumPy files.
// Names map 1:1 (an .npz member `w.npy` is tensor `w`; a lone .npy takes its file's stem).
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.h"
#include "convert_read_options.h"
#include "foreign_formats.h"
#include "input.h"
#include "json_util.h"
#include "progress.h"
#include "report.h"
#include "safetensors/formats/npy.h"
#include "safetensors/formats/npz.h"
#include "safetensors/sniff.h"
#include "safetensors/writer.h"

namespace st_cli {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) { return s.ends_with(suffix); }

// The arrays of an .npy or .npz input behind one interface.
class numpy_input {
 public:
  struct array {
    std::string name;
    const safetensors::npy_header* header = nullptr;
    const safetensors::npz_array* member = nullptr;  // null for an .npy
  };

  static safetensors::result<numpy_input> open(const std::string& path, const safetensors::npz_options& options = {}) {
    auto format = safetensors::sniff_file(path);
    if (!format) return std::move(format).err();
    numpy_input in;
    if (*format == safetensors::file_format::npy) {
      auto npy = safetensors::npy_file::open(path);
      if (!npy) return std::move(npy).err();
      in.npy_.emplace(std::move(*npy));
      in.arrays_.push_back({std::filesystem::path(path).stem().string(), &in.npy_->header(), nullptr});
      return in;
    }
    auto npz = safetensors::npz_archive::open(path, options);
    if (!npz) return std::move(npz).err();
    in.npz_.emplace(std::move(*npz));
    for (const auto& a : in.npz_->arrays()) in.arrays_.push_back({a.name, &a.header, &a});
    return in;
  }

  [[nodiscard]] const std::vector<array>& arrays() const { return arrays_; }
  [[nodiscard]] bool is_npz() const { return npz_.has_value(); }

  /// Passes the array's SafeTensors bytes to `sink` in chunks (an .npz member is inflated
  /// as it goes, never held whole).
  safetensors::status stream(const array& a, const std::function<safetensors::status(std::span<const std::byte>)>& sink,
                             std::vector<std::byte>& buffer) const {
    if (npz_) return npz_->read_chunks(*a.member, sink);
    auto bytes = this->bytes(a, buffer);
    if (!bytes) return std::move(bytes).err();
    constexpr std::size_t chunk = std::size_t{1} << 20;
    for (std::size_t at = 0; at < bytes->size(); at += chunk) {
      if (auto s = sink(bytes->subspan(at, std::min(chunk, bytes->size() - at))); !s) return s;
    }
    return {};
  }

  /// The array's SafeTensors bytes: a view into the input when possible, else `buffer`.
  safetensors::result<std::span<const std::byte>> bytes(const array& a, std::vector<std::byte>& buffer) const {
    auto view = npz_ ? npz_->view(*a.member) : npy_->view();
    if (view) return *view;
    buffer.resize(a.header->data_bytes);
    auto s = npz_ ? npz_->read(*a.member, buffer) : npy_->read(buffer);
    if (!s) return std::move(s).err();
    return std::span<const std::byte>(buffer);
  }

 private:
  std::optional<safetensors::npy_file> npy_;
  std::optional<safetensors::npz_archive> npz_;
  std::vector<array> arrays_;
};

safetensors::status write_safetensors(const numpy_input& in, const std::string& out, bool show_progress) {
  std::vector<safetensors::tensor_spec> specs;
  std::uint64_t total = 0;
  for (const auto& a : in.arrays()) {
    specs.push_back({a.name, a.header->type, a.header->shape});
    total += a.header->data_bytes;
  }
  auto plan = safetensors::write_plan::make(std::move(specs));
  if (!plan) return std::move(plan).err();
  auto writer = safetensors::stream_writer::create(out, std::move(*plan));
  if (!writer) return std::move(writer).err();
  progress bar("convert", total, show_progress);
  std::vector<std::byte> buffer;
  for (const auto& a : in.arrays()) {
    auto s = in.stream(
        a,
        [&](std::span<const std::byte> chunk) -> safetensors::status {
          bar.advance(chunk.size());
          return writer->append(a.name, chunk);
        },
        buffer);
    if (!s) return s;
  }
  bar.finish();
  return writer->commit();
}

void warn(std::string_view message) { fmt::print(stderr, "safetensors: warning: {}\n", message); }

// Every tensor must have a NumPy dtype before anything is written.
safetensors::status check_numpy_dtypes(const safetensors::file& f) {
  for (const auto& t : f.tensors()) {
    if (!safetensors::npy_descr(t.type)) {
      return safetensors::make_error(safetensors::error_code::unsupported,
                                     fmt::format("{} has no NumPy dtype", safetensors::dtype_name(t.type)),
                                     std::nullopt, std::string(t.name));
    }
  }
  return {};
}

void warn_about_losses(const safetensors::file& f) {
  if (const auto& meta = f.meta().metadata(); meta && !meta->empty()) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : *meta) keys.push_back(k);
    warn(fmt::format("NumPy files cannot hold __metadata__: dropped {} entr{} ({})", keys.size(),
                     keys.size() == 1 ? "y" : "ies", fmt::join(keys, ", ")));
  }
  for (const auto& t : f.tensors()) {
    if (t.type == safetensors::dtype::BF16) {
      warn("BF16 tensors are written as '<V2' (MLX's convention; NumPy sees 2-byte voids)");
      break;
    }
  }
}

safetensors::status write_npz(const safetensors::file& f, const convert_args& args) {
  auto writer = safetensors::npz_writer::create(args.out, {.compress = args.compress});
  if (!writer) return std::move(writer).err();
  progress bar("convert", total_tensor_bytes(f), !args.quiet);
  std::vector<std::byte> buffer;
  for (const auto& t : f.tensors()) {
    if (auto s = writer->begin_array(t.name, t.type, t.shape); !s) return s;
    auto s = for_each_chunk(f, t, buffer, [&](std::span<const std::byte> chunk) -> safetensors::status {
      bar.advance(chunk.size());
      return writer->append(chunk);
    });
    if (!s) return s;
  }
  bar.finish();
  return writer->commit();
}

safetensors::status check_single_tensor(const safetensors::file& f) {
  if (f.tensors().size() == 1) return {};
  return safetensors::make_error(
      safetensors::error_code::invalid_argument,
      fmt::format("an .npy file holds exactly one array and the input has {} tensors: write an .npz instead",
                  f.tensors().size()));
}

safetensors::status write_single_npy(const safetensors::file& f, const std::string& out) {
  const auto& t = f.tensors().front();
  auto data = f.load(t.name);
  if (!data) return std::move(data).err();
  return safetensors::write_npy(out, t.type, t.shape, *data);
}

std::string shape_text(std::span<const std::uint64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace

run_result convert_numpy_to_safetensors(const convert_args& args) {
  auto options = npz_limits_of(args);
  if (!options) return with_path(options.err(), args.in);
  auto in = numpy_input::open(args.in, *options);
  if (!in) return with_path(in.err(), args.in);
  if (auto s = write_safetensors(*in, args.out, !args.quiet); !s) return with_path(s.err(), args.out);
  return exit_ok;
}

run_result convert_safetensors_to_numpy(const convert_args& args) {
  auto f = open_input(args.in);
  if (!f) return with_path(f.err(), args.in);
  if (auto s = check_numpy_dtypes(*f); !s) return with_path(s.err(), args.in);
  const bool single = ends_with(args.out, ".npy");
  if (single) {
    if (auto s = check_single_tensor(*f); !s) return with_path(s.err(), args.out);
  }
  if (single && args.compress) warn("--compress applies to .npz output only");
  warn_about_losses(*f);
  auto s = single ? write_single_npy(*f, args.out) : write_npz(*f, args);
  if (!s) return with_path(s.err(), args.out);
  return exit_ok;
}

run_result inspect_numpy(const std::string& path, bool json) {
  auto in = numpy_input::open(path);
  if (!in) return with_path(in.err(), path);
  std::uint64_t total = 0;
  for (const auto& a : in->arrays()) total += a.header->data_bytes;
  if (json) {
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
  fmt::print("{}: NumPy {}, {} array{}, {} of data\n", path, in->is_npz() ? ".npz" : ".npy", in->arrays().size(),
             in->arrays().size() == 1 ? "" : "s", human_bytes(total));
  std::size_t width = 4;
  for (const auto& a : in->arrays()) width = std::max(width, a.name.size());
  fmt::print("{:<{}}  {:<5}  {:<6}  {:>12}  {}\n", "NAME", width, "DTYPE", "DESCR", "BYTES", "SHAPE");
  for (const auto& a : in->arrays()) {
    const auto& h = *a.header;
    fmt::print("{:<{}}  {:<5}  {:<6}  {:>12}  {}{}\n", a.name, width, safetensors::dtype_name(h.type), h.descr,
               h.data_bytes, shape_text(h.shape), h.fortran_order ? " (fortran order)" : "");
  }
  return exit_ok;
}

}  // namespace st_cli
