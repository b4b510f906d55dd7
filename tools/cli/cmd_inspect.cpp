// SPDX-License-Identifier: Apache-2.0
// `safetensors inspect FILE [--json]`: summary and tensor table.
#include <map>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "command.h"
#include "mlx_summary.h"
#include "report.h"
#include "safetensors/file.h"
#include "safetensors/json_text.h"

namespace st_cli {
namespace {

/// Largest power of two (up to 4096) that divides `offset`.
std::uint64_t alignment_of(std::uint64_t offset) {
  std::uint64_t a = 1;
  while (a < 4096 && offset % (a * 2) == 0) a *= 2;
  return a;
}

std::string human_bytes(std::uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

void print_summary(const std::string& path, const safetensors::header& h, std::uint64_t file_size) {
  std::map<safetensors::dtype, std::pair<std::uint64_t, std::uint64_t>> per_dtype;  // params, bytes
  std::uint64_t params = 0;
  for (const auto& t : h.tensors()) {
    params += t.element_count();
    auto& [p, b] = per_dtype[t.type];
    p += t.element_count();
    b += t.byte_size();
  }
  fmt::print("file:        {}\n", path);
  fmt::print("size:        {} ({} bytes)\n", human_bytes(file_size), file_size);
  fmt::print("header:      {} bytes, data starts at byte {} (aligned to {})\n", h.header_length(), h.data_start(),
             alignment_of(h.data_start()));
  fmt::print("tensors:     {}\n", h.tensors().size());
  fmt::print("parameters:  {}\n", params);
  for (const auto& [type, pb] : per_dtype) {
    fmt::print("  {:<12} {:>14} params  {:>12}\n", safetensors::dtype_name(type), pb.first, human_bytes(pb.second));
  }
  if (h.metadata()) {
    fmt::print("metadata:\n");
    for (const auto& [k, v] : *h.metadata()) fmt::print("  {}: {}\n", k, v);
  } else {
    fmt::print("metadata:    none\n");
  }
  if (h.tensors().empty()) return;
  std::size_t width = 4;
  for (const auto& t : h.tensors()) width = std::max(width, t.name.size());
  width = std::min<std::size_t>(width, 80);
  fmt::print("\n{:<{}}  {:<11}  {:<20}  {:>12}  {}\n", "name", width, "dtype", "shape", "bytes", "data_offsets");
  for (const auto& t : h.tensors()) {
    fmt::print("{:<{}}  {:<11}  {:<20}  {:>12}  [{}, {}]\n", t.name, width, safetensors::dtype_name(t.type),
               fmt::format("[{}]", fmt::join(t.shape, ", ")), t.byte_size(), t.begin, t.end);
  }
}

struct inspect_args {
  std::string file;
  bool json = false;
};

int run_inspect(const inspect_args& args) {
  if (is_checkpoint_path(args.file)) return inspect_checkpoint(args.file, args.json);
  safetensors::open_options options;
  options.backend = safetensors::io_backend::pread;  // the header is all inspect needs
  auto f = safetensors::file::open(args.file, options);
  if (!f) {
    print_error(f.err());
    return exit_code_for(f.err());
  }
  if (args.json) {
    fmt::print("{}\n", safetensors::header_to_json(f->meta()));
  } else {
    print_summary(args.file, f->meta(), f->file_size());
    print_mlx_summary(args.file, f->meta());
  }
  return exit_ok;
}

const command_registrar registrar{"inspect", "Summarise a file: tensors, dtypes, parameters, metadata",
                                  [](CLI::App& app) -> std::function<int()> {
                                    auto args = std::make_shared<inspect_args>();
                                    app.add_option("file", args->file, "SafeTensors file, checkpoint directory or index")->required();
                                    app.add_flag("--json", args->json, "Print the parsed header as JSON");
                                    return [args] { return run_inspect(*args); };
                                  }};

}  // namespace
}  // namespace st_cli
