// SPDX-License-Identifier: Apache-2.0
// `safetensors quantize IN OUT [--bits B] [--group-size G] [--mode M] [--only GLOB]...
// [--exclude GLOB]... [--config-out PATH] [--max-shard-size 5GB]`: writes an MLX-layout
// checkpoint (P.weight as U32 codes, P.scales, P.biases) with MLX's CPU quantizer, streamed
// in row chunks. IN may be a sharded checkpoint; OUT is then a checkpoint directory.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "command.h"
#include "mlx_stream.h"
#include "progress.h"
#include "report.h"
#include "safetensors/file.h"
#include "safetensors/glob.h"
#include "safetensors/json_text.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/writer.h"
#include "select.h"

namespace st_cli {

using safetensors::pipeline::check_output;
using safetensors::pipeline::input_files;
using safetensors::pipeline::os_failure;
namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

struct quantize_args {
  std::string in;
  std::string out;
  std::optional<unsigned> bits;
  std::optional<unsigned> group_size;
  std::string mode = "affine";
  std::vector<std::string> only;
  std::vector<std::string> exclude;
  std::string config_out;
  std::string max_shard_size = "5GB";
  bool quiet = false;
};

struct planned_layer {
  const safetensors::tensor_info* source = nullptr;  // entry in mlx_input::meta()
  std::string path;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

/// Where a layer's three outputs go.
struct layer_sinks {
  safetensors::chunk_sink weight, scales, biases;
};

/// Quantizes one layer a chunk of rows at a time, read from the input as needed; `done`
/// counts the input bytes consumed (for the progress bar).
safetensors::status write_layer(const mlx_input& in, const planned_layer& layer, const mlx::quant_params& p,
                                const layer_sinks& out, const std::function<void(std::uint64_t)>& done) {
  if (layer.rows == 0) return {};
  const std::size_t in_row = layer.source->byte_size() / layer.rows;
  const std::size_t w_row = layer.cols * p.bits / 8;
  const dtype st = mlx::scale_dtype_for(p.mode, layer.source->type);
  const std::size_t s_row = layer.cols / p.group_size * (safetensors::dtype_bits(st) / 8);
  const bool affine = p.mode == mlx::quant_mode::affine;
  const std::uint64_t chunk_rows = std::max<std::uint64_t>(1, mlx_chunk_bytes / std::max<std::size_t>(1, in_row));
  const auto max_rows = static_cast<std::size_t>(std::min(chunk_rows, layer.rows));
  std::vector<std::byte> input(max_rows * in_row);
  std::vector<std::byte> w(max_rows * w_row), s(max_rows * s_row), b(affine ? max_rows * s_row : 0);
  for (std::uint64_t r = 0; r < layer.rows; r += chunk_rows) {
    const auto n = static_cast<std::size_t>(std::min(chunk_rows, layer.rows - r));
    const std::span<std::byte> rows(input.data(), n * in_row);
    if (auto got = in.read(layer.source->name, r * in_row, rows); !got) return got;
    const mlx::quantized_out parts{{w.data(), n * w_row}, {s.data(), n * s_row}, {b.data(), affine ? n * s_row : 0}};
    if (auto st2 = mlx::quantize(layer.source->type, rows, n, layer.cols, p, parts); !st2) {
      safetensors::error e = std::move(st2).err();
      e.tensor = std::string(layer.source->name);
      return e;
    }
    for (auto [sink, span] : {std::pair{&out.weight, parts.weight}, std::pair{&out.scales, parts.scales},
                              std::pair{&out.biases, parts.biases}}) {
      if (!affine && sink == &out.biases) continue;
      if (auto st2 = (*sink)(span); !st2) return st2;
    }
    done(rows.size());
  }
  return {};
}

std::string config_fragment(const mlx::quant_params& p) {
  const std::string body = fmt::format("{{\"group_size\": {}, \"bits\": {}, \"mode\": {}}}", p.group_size, p.bits,
                                       safetensors::json_quote(mlx::mode_name(p.mode)));
  return fmt::format("{{\n  \"quantization\": {},\n  \"quantization_config\": {}\n}}\n", body, body);
}

/// Writes the config fragment atomically enough for a few hundred bytes: a temporary
/// beside it, renamed over it; errors carry the system's reason.
safetensors::status write_config_fragment(const std::string& path, const std::string& text) {
  const std::string temp = fmt::format("{}.tmp-{}", path, ::getpid());
  std::FILE* f = std::fopen(temp.c_str(), "w");
  if (f == nullptr) return os_failure("cannot write the config fragment", errno, path);
  const bool written = std::fputs(text.c_str(), f) >= 0;
  const int write_errno = errno;
  if (std::fclose(f) != 0 || !written) {
    const int e = written ? errno : write_errno;
    std::remove(temp.c_str());
    return os_failure("cannot write the config fragment", e, path);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(temp.c_str());
    return os_failure("cannot write the config fragment", e, path);
  }
  return {};
}

run_result run_quantize(const quantize_args& args) {
  auto mode = mlx::parse_mode(args.mode);
  if (!mode) {
    return usage_error(fmt::format("unknown --mode '{}': use affine, mxfp4, mxfp8 or nvfp4", args.mode));
  }
  mlx::quant_params p = mlx::default_params(*mode);
  if (args.bits) p.bits = *args.bits;
  if (args.group_size) p.group_size = *args.group_size;
  if (auto s = mlx::check_quantize_params(p); !s) return std::move(s).err();
  auto job = open_mlx_job(args.in, args.max_shard_size, false);
  if (!job) return std::move(job).err();
  const mlx_input* in = &job->in;
  const mlx::checkpoint_info* info = &job->info;
  const std::uint64_t max_shard_bytes = job->max_shard_bytes;
  if (auto s = require_matches(in->meta().tensors(), args.only, args.exclude, args.in); !s) {
    return with_path(s.err(), args.in);
  }

  const mlx::selection_rules rules{args.only, args.exclude};
  std::vector<safetensors::tensor_spec> specs;
  std::vector<planned_layer> layers;
  for (const auto& t : in->meta().tensors()) {
    const bool already = info->find_weight(t.name) != nullptr || info->is_companion(t.name);
    if (!already && mlx::selected_for_quantization(t, p, rules)) {
      planned_layer layer{&t, std::string(t.name.substr(0, t.name.size() - 7)), 1, t.shape.back()};
      for (std::size_t i = 0; i + 1 < t.shape.size(); ++i) layer.rows *= t.shape[i];
      std::vector<std::uint64_t> shape(t.shape.begin(), t.shape.end());
      shape.back() = layer.cols * p.bits / 32;
      specs.push_back({layer.path + ".weight", dtype::U32, shape});
      shape.back() = layer.cols / p.group_size;
      const dtype st = mlx::scale_dtype_for(p.mode, t.type);
      specs.push_back({layer.path + ".scales", st, shape});
      if (p.mode == mlx::quant_mode::affine) specs.push_back({layer.path + ".biases", st, shape});
      layers.push_back(layer);
      continue;
    }
    const auto matches = [&](const std::vector<std::string>& patterns) {
      return std::any_of(patterns.begin(), patterns.end(),
                         [&](const std::string& g) { return safetensors::name_matches(g, t.name); });
    };
    if (!already && !rules.only.empty() && t.name.ends_with(".weight") && t.shape.size() >= 2 && matches(rules.only) &&
        !matches(rules.exclude) && t.shape.back() % p.group_size != 0) {
      // Asked for by name but impossible: say so instead of silently skipping it.
      return with_path(safetensors::make_error(
                           safetensors::error_code::invalid_argument,
                           fmt::format("group size {} does not divide the row length {}", p.group_size, t.shape.back()),
                           std::nullopt, std::string(t.name)),
                       args.in);
    }
    specs.push_back({std::string(t.name), t.type, {t.shape.begin(), t.shape.end()}});
  }
  if (layers.empty()) {
    // A file claiming quantization_bits with nothing quantized would mislead every loader.
    return with_path(safetensors::make_error(safetensors::error_code::invalid_argument,
                                             "no tensor to quantize (float *.weight tensors of rank >= 2 whose last "
                                             "axis divides by the group size, not yet quantized, selected by "
                                             "--only/--exclude)"),
                     args.in);
  }
  // Every output is checked before any is written.
  const std::vector<std::string> inputs = input_files(in->checkpoint());
  if (!args.config_out.empty()) {
    if (auto s = check_output(args.config_out, inputs); !s) return std::move(s).err();
  }
  if (!in->directory_output()) {
    if (auto s = check_output(args.out, inputs); !s) return std::move(s).err();
  }
  safetensors::metadata_map metadata = in->meta().metadata().value_or(safetensors::metadata_map{});
  metadata["format"] = "mlx";
  metadata["quantization_bits"] = std::to_string(p.bits);
  metadata["quantization_group_size"] = std::to_string(p.group_size);
  metadata["quantization_mode"] = std::string(mlx::mode_name(p.mode));
  progress bar("quantize", in->meta().data_size(), !args.quiet);
  const auto advance = [&bar](std::uint64_t bytes) { bar.advance(bytes); };
  const auto ignore = [](std::uint64_t) {};
  auto is_layer = [&](const safetensors::tensor_info& t) {
    return std::any_of(layers.begin(), layers.end(), [&](const planned_layer& l) { return l.source == &t; });
  };

  if (in->directory_output()) {
    // Tensors are written one after the other, so while a layer's codes stream out its
    // scales and biases (at most half the codes' size, 1/8 for 4-bit g64) are kept for
    // their turn.
    std::map<std::string, std::vector<std::byte>, std::less<>> held;
    auto keep = [&held](std::string name) {
      return [&held, name = std::move(name)](std::span<const std::byte> chunk) -> safetensors::status {
        auto& buffer = held[name];
        buffer.insert(buffer.end(), chunk.begin(), chunk.end());
        return {};
      };
    };
    const safetensors::chunk_sink discard = [](std::span<const std::byte>) -> safetensors::status { return {}; };
    auto produce = [&](std::size_t i, const safetensors::chunk_sink& sink) -> safetensors::status {
      const std::string& name = specs[i].name;
      const auto dot = name.rfind('.');
      const std::string_view path = std::string_view(name).substr(0, dot);
      const std::string_view suffix =
          dot == std::string::npos ? std::string_view() : std::string_view(name).substr(dot);
      const auto layer =
          std::find_if(layers.begin(), layers.end(), [&](const planned_layer& l) { return l.path == path; });
      if (layer == layers.end() || (suffix != ".weight" && suffix != ".scales" && suffix != ".biases")) {
        return in->copy(name, [&](std::span<const std::byte> chunk) -> safetensors::status {
          bar.advance(chunk.size());
          return sink(chunk);
        });
      }
      if (suffix == ".weight") {
        return write_layer(*in, *layer, p, {sink, keep(layer->path + ".scales"), keep(layer->path + ".biases")},
                           advance);
      }
      if (!held.contains(name)) {  // its weight has not been written (yet): compute again
        if (auto s = write_layer(*in, *layer, p,
                                 {discard, keep(layer->path + ".scales"), keep(layer->path + ".biases")}, ignore);
            !s) {
          return s;
        }
      }
      const auto it = held.find(name);
      if (it == held.end()) return {};  // write_layer always fills it; the size check catches a gap
      const std::vector<std::byte> bytes = std::move(it->second);
      held.erase(it);
      return sink(bytes);
    };
    const auto s = write_sharded(args.out, *in, specs, produce, max_shard_bytes, metadata);
    if (!s) return with_path(s.err(), args.out);
  } else {
    safetensors::write_options options;
    options.metadata = std::move(metadata);
    auto plan = safetensors::write_plan::make(std::move(specs), options);
    if (!plan) return with_path(plan.err(), args.out);
    auto writer = safetensors::stream_writer::create(args.out, std::move(plan).value());
    if (!writer) return with_path(writer.err(), args.out);
    for (const auto& layer : layers) {
      const layer_sinks sinks{append_to(*writer, layer.path + ".weight"), append_to(*writer, layer.path + ".scales"),
                              append_to(*writer, layer.path + ".biases")};
      if (auto s = write_layer(*in, layer, p, sinks, advance); !s) return with_path(s.err(), args.in);
    }
    for (const auto& t : in->meta().tensors()) {
      if (is_layer(t)) continue;
      const auto sink = append_to(*writer, std::string(t.name));
      if (auto s = in->copy(t.name,
                            [&](std::span<const std::byte> chunk) -> safetensors::status {
                              bar.advance(chunk.size());
                              return sink(chunk);
                            });
          !s) {
        return with_path(s.err(), args.out);
      }
    }
    if (auto s = writer->commit(); !s) return with_path(s.err(), args.out);
  }
  bar.finish();
  if (!args.config_out.empty()) {
    if (auto s = write_config_fragment(args.config_out, config_fragment(p)); !s)
      return with_path(s.err(), args.config_out);
  }
  return exit_ok;
}

const command_registrar quantize_registrar{
    "quantize", "Quantize linear and embedding weights into an MLX checkpoint", [](CLI::App& app) -> runner {
      auto args = std::make_shared<quantize_args>();
      app.add_option("in", args->in,
                     "SafeTensors file with F32/F16/BF16 weights, or a sharded checkpoint's directory or index")
          ->required();
      app.add_option("out", args->out, "Output MLX file; for a sharded input, the output checkpoint directory")
          ->required();
      app.add_option("--bits", args->bits, "Bits per weight (affine: 2, 3, 4, 5, 6, 8; default per mode)");
      app.add_option("--group-size", args->group_size, "Group size (affine: 32, 64, 128; default per mode)");
      app.add_option("--mode", args->mode, "affine (default), mxfp4, mxfp8 or nvfp4");
      add_selection(app, args->only, args->exclude, "Quantize only tensors matching this glob or name",
                    "Leave tensors matching this glob or name unquantized");
      add_quiet(app, args->quiet);
      app.add_option("--config-out", args->config_out, "Write an mlx-lm style quantization config fragment here");
      app.add_option("--max-shard-size", args->max_shard_size,
                     "Sharded input only: largest output shard, decimal (5GB) or binary (2GiB) units")
          ->capture_default_str();
      return [args] { return run_quantize(*args); };
    }};

}  // namespace
}  // namespace st_cli
