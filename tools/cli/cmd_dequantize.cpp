// SPDX-License-Identifier: Apache-2.0
// `safetensors dequantize IN OUT [--dtype F32|F16|BF16] [--max-shard-size 5GB]`: every
// quantized MLX layer becomes a plain `P.weight` (scales and biases dropped), everything
// else is copied; streamed in row chunks with bounded memory, written atomically. IN may be
// a sharded checkpoint (directory or index); OUT is then a checkpoint directory.
#include <algorithm>
#include <functional>
#include <tuple>

#include <fmt/format.h>

#include "command.h"
#include "mlx_stream.h"
#include "progress.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/file.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/writer.h"

namespace st_cli {

using safetensors::pipeline::check_output;
using safetensors::pipeline::input_files;
namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

struct dequantize_args {
  std::string in;
  std::string out;
  std::string dtype_name;
  std::string max_shard_size = "5GB";
  bool quiet = false;
};

bool is_quantization_key(std::string_view k) {
  return k == "quantization_bits" || k == "quantization_group_size" || k == "quantization_mode";
}

/// Bytes of tensor `name` (0 when absent: the layer description has been checked).
std::uint64_t tensor_bytes(const mlx_input& in, const std::string& name) {
  const auto* t = name.empty() ? nullptr : in.checkpoint().find(name);
  return t == nullptr ? 0 : t->info->byte_size();
}

/// Dequantizes one layer into `out`, a chunk of rows at a time read from the input;
/// `done` counts the input bytes consumed.
safetensors::status write_layer(const mlx_input& in, const mlx::quantized_layer& layer, dtype out_type,
                                const safetensors::chunk_sink& out, const std::function<void(std::uint64_t)>& done) {
  if (layer.rows == 0 || layer.cols == 0) return {};
  const std::size_t out_row = layer.cols * (safetensors::dtype_bits(out_type) / 8);
  const std::size_t w_row = tensor_bytes(in, layer.weight) / layer.rows;
  const std::size_t s_row = tensor_bytes(in, layer.scales) / layer.rows;
  const bool affine = !layer.biases.empty();
  const std::uint64_t chunk_rows = std::max<std::uint64_t>(1, mlx_chunk_bytes / std::max<std::size_t>(1, out_row));
  const auto max_rows = static_cast<std::size_t>(std::min(chunk_rows, layer.rows));
  std::vector<std::byte> buffer(max_rows * out_row);
  std::vector<std::byte> w(max_rows * w_row), s(max_rows * s_row), b(affine ? max_rows * s_row : 0);
  for (std::uint64_t r = 0; r < layer.rows; r += chunk_rows) {
    const auto n = static_cast<std::size_t>(std::min(chunk_rows, layer.rows - r));
    mlx::quantized_ref part;
    part.params = layer.params;
    part.rows = n;
    part.cols = layer.cols;
    part.scale_type = layer.scale_type;
    part.weight = std::span<const std::byte>(w.data(), n * w_row);
    part.scales = std::span<const std::byte>(s.data(), n * s_row);
    if (affine) part.biases = std::span<const std::byte>(b.data(), n * s_row);
    for (auto [name, dst, row] :
         {std::tuple{&layer.weight, w.data(), w_row}, std::tuple{&layer.scales, s.data(), s_row},
          std::tuple{&layer.biases, b.data(), s_row}}) {
      if (name->empty()) continue;
      if (auto got = in.read(*name, r * row, std::span<std::byte>(dst, n * row)); !got) return got;
    }
    const std::span<std::byte> dst(buffer.data(), n * out_row);
    if (auto st = mlx::dequantize(part, out_type, dst); !st) {
      safetensors::error e = std::move(st).err();
      e.tensor = layer.weight;
      e.message = fmt::format("layer '{}': {}", layer.path, e.message);
      return e;
    }
    if (auto st = out(dst); !st) return st;
    done(n * (w_row + s_row * (affine ? 2 : 1)));
  }
  return {};
}

run_result run_dequantize(const dequantize_args& args) {
  std::optional<dtype> forced;
  if (!args.dtype_name.empty()) {
    forced = safetensors::parse_dtype(args.dtype_name);
    if (!forced || (*forced != dtype::F32 && *forced != dtype::F16 && *forced != dtype::BF16)) {
      return usage_error(fmt::format("--dtype must be F32, F16 or BF16, not '{}'", args.dtype_name));
    }
  }
  auto job = open_mlx_job(args.in, args.max_shard_size, true);
  if (!job) return std::move(job).err();
  const mlx_input* in = &job->in;
  const mlx::checkpoint_info* info = &job->info;
  const std::uint64_t max_shard_bytes = job->max_shard_bytes;
  if (info->layers.empty()) {
    print_warning(fmt::format("{}: no quantized layers, the output is a plain copy", args.in));
  }

  std::vector<safetensors::tensor_spec> specs;
  for (const auto& t : in->meta().tensors()) {
    if (info->is_companion(t.name)) continue;
    if (const auto* layer = info->find_weight(t.name)) {
      specs.push_back({layer->weight,
                       forced.value_or(layer->params.mode == mlx::quant_mode::affine ? layer->scale_type : dtype::BF16),
                       layer->shape});
    } else {
      specs.push_back({std::string(t.name), t.type, {t.shape.begin(), t.shape.end()}});
    }
  }
  std::optional<safetensors::metadata_map> metadata;
  if (in->meta().metadata()) {
    safetensors::metadata_map kept;
    for (const auto& [k, v] : *in->meta().metadata()) {
      if (!is_quantization_key(k)) kept.emplace(k, v);
    }
    metadata = std::move(kept);
  }
  if (!in->directory_output()) {
    const std::vector<std::string> inputs = input_files(in->checkpoint());
    if (auto s = check_output(args.out, inputs); !s) return std::move(s).err();
  }
  progress bar("dequantize", in->meta().data_size(), !args.quiet);
  auto produce = [&](std::string_view name, dtype type, const safetensors::chunk_sink& sink) -> safetensors::status {
    if (const auto* layer = info->find_weight(name)) {
      return write_layer(*in, *layer, type, sink, [&bar](std::uint64_t bytes) { bar.advance(bytes); });
    }
    return in->copy(name, [&](std::span<const std::byte> chunk) -> safetensors::status {
      bar.advance(chunk.size());
      return sink(chunk);
    });
  };

  if (in->directory_output()) {
    const auto s = write_sharded(
        args.out, *in, specs,
        [&](std::size_t i, const safetensors::chunk_sink& sink) { return produce(specs[i].name, specs[i].type, sink); },
        max_shard_bytes, metadata);
    if (!s) return with_path(s.err(), args.out);
    return exit_ok;
  }
  safetensors::write_options options;
  options.metadata = std::move(metadata);
  auto plan = safetensors::write_plan::make(std::move(specs), options);
  if (!plan) return with_path(plan.err(), args.out);
  auto writer = safetensors::stream_writer::create(args.out, std::move(plan).value());
  if (!writer) return with_path(writer.err(), args.out);
  for (const auto& planned : writer->plan().tensors()) {
    if (auto s = produce(planned.name, planned.type, append_to(*writer, planned.name)); !s)
      return with_path(s.err(), args.out);
  }
  if (auto s = writer->commit(); !s) return with_path(s.err(), args.out);
  return exit_ok;
}

const command_registrar dequantize_registrar{
    "dequantize", "Turn an MLX quantized checkpoint into plain F32/F16/BF16 weights", [](CLI::App& app) -> runner {
      auto args = std::make_shared<dequantize_args>();
      app.add_option("in", args->in,
                     "MLX SafeTensors file, or a sharded checkpoint's directory or index (config.json beside it is "
                     "read when present)")
          ->required();
      app.add_option("out", args->out, "Output file; for a sharded input, the output checkpoint directory")->required();
      app.add_option("--dtype", args->dtype_name,
                     "Output dtype of dequantized weights: F32, F16 or BF16 (default: MLX's, the scales' dtype "
                     "for affine layers and BF16 for fp modes)");
      app.add_option("--max-shard-size", args->max_shard_size,
                     "Sharded input only: largest output shard, decimal (5GB) or binary (2GiB) units")
          ->capture_default_str();
      add_quiet(app, args->quiet);
      return [args] { return run_dequantize(*args); };
    }};

}  // namespace
}  // namespace st_cli
