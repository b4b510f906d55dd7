// SPDX-License-Identifier: Apache-2.0
// `safetensors dequantize IN OUT [--dtype F32|F16|BF16] [--max-shard-size 5GB]`: every
// quantized MLX layer becomes a plain `P.weight` (scales and biases dropped), everything
// else is copied; streamed in row chunks with bounded memory, written atomically. IN may be
// a sharded checkpoint (directory or index); OUT is then a checkpoint directory.
#include <algorithm>

#include <fmt/format.h>

#include "command.h"
#include "mlx_stream.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/file.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/writer.h"

namespace st_cli {
namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

struct dequantize_args {
  std::string in;
  std::string out;
  std::string dtype_name;
  std::string max_shard_size = "5GB";
};

bool is_quantization_key(std::string_view k) {
  return k == "quantization_bits" || k == "quantization_group_size" || k == "quantization_mode";
}

/// Dequantizes one layer into `out`, a chunk of rows at a time.
safetensors::status write_layer(const mlx_input& in, const mlx::quantized_layer& layer, dtype out_type,
                                const safetensors::chunk_sink& out) {
  auto whole = mlx::layer_ref(in.checkpoint(), layer);
  if (!whole) return std::move(whole).err();
  if (layer.rows == 0 || layer.cols == 0) return {};
  const std::size_t out_row = layer.cols * (safetensors::dtype_bits(out_type) / 8);
  const std::size_t w_row = whole->weight.size() / layer.rows;
  const std::size_t s_row = whole->scales.size() / layer.rows;
  const std::uint64_t chunk_rows = std::max<std::uint64_t>(1, mlx_chunk_bytes / std::max<std::size_t>(1, out_row));
  std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(chunk_rows, layer.rows)) * out_row);
  for (std::uint64_t r = 0; r < layer.rows; r += chunk_rows) {
    const auto n = static_cast<std::size_t>(std::min(chunk_rows, layer.rows - r));
    mlx::quantized_ref part = *whole;
    part.rows = n;
    part.weight = whole->weight.subspan(r * w_row, n * w_row);
    part.scales = whole->scales.subspan(r * s_row, n * s_row);
    if (!whole->biases.empty()) part.biases = whole->biases.subspan(r * s_row, n * s_row);
    const std::span<std::byte> dst(buffer.data(), n * out_row);
    if (auto s = mlx::dequantize(part, out_type, dst); !s) {
      safetensors::error e = std::move(s).err();
      e.tensor = layer.weight;
      e.message = fmt::format("layer '{}': {}", layer.path, e.message);
      return e;
    }
    if (auto s = out(dst); !s) return s;
  }
  return {};
}


int run_dequantize(const dequantize_args& args) {
  std::optional<dtype> forced;
  if (!args.dtype_name.empty()) {
    forced = safetensors::parse_dtype(args.dtype_name);
    if (!forced || (*forced != dtype::F32 && *forced != dtype::F16 && *forced != dtype::BF16)) {
      print_error(fmt::format("--dtype must be F32, F16 or BF16, not '{}'", args.dtype_name));
      return exit_usage;
    }
  }
  int status = exit_ok;
  auto job = open_mlx_job(args.in, args.max_shard_size, true, status);
  if (!job) return status;
  const mlx_input* in = &job->in;
  const mlx::checkpoint_info* info = &job->info;
  const std::uint64_t max_shard_bytes = job->max_shard_bytes;
  if (info->layers.empty()) {
    fmt::print(stderr, "safetensors: warning: {}: no quantized layers, the output is a plain copy\n", args.in);
  }

  std::vector<safetensors::tensor_spec> specs;
  for (const auto& t : in->meta().tensors()) {
    if (info->is_companion(t.name)) continue;
    if (const auto* layer = info->find_weight(t.name)) {
      specs.push_back({layer->weight, forced.value_or(layer->params.mode == mlx::quant_mode::affine ? layer->scale_type
                                                                                                   : dtype::BF16),
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
  progress_line progress("dequantize", specs.size());
  auto produce = [&](std::string_view name, dtype type, const safetensors::chunk_sink& sink) -> safetensors::status {
    safetensors::status s;
    if (const auto* layer = info->find_weight(name)) {
      s = write_layer(*in, *layer, type, sink);
    } else {
      s = copy_tensor(*in->view(name), sink);
    }
    if (s) progress.step(name);
    return s;
  };

  if (in->directory_output()) {
    const auto s = write_sharded(
        args.out, *in, specs,
        [&](std::size_t i, const safetensors::chunk_sink& sink) { return produce(specs[i].name, specs[i].type, sink); },
        max_shard_bytes, metadata);
    return s ? exit_ok : fail_with(s.err(), args.out);
  }
  safetensors::write_options options;
  options.metadata = std::move(metadata);
  auto plan = safetensors::write_plan::make(std::move(specs), options);
  if (!plan) return fail_with(plan.err(), args.out);
  auto writer = safetensors::stream_writer::create(args.out, std::move(plan).value());
  if (!writer) return fail_with(writer.err(), args.out);
  for (const auto& planned : writer->plan().tensors()) {
    if (auto s = produce(planned.name, planned.type, append_to(*writer, planned.name)); !s) return fail_with(s.err(), args.out);
  }
  if (auto s = writer->commit(); !s) return fail_with(s.err(), args.out);
  return exit_ok;
}

const command_registrar registrar{
    "dequantize", "Turn an MLX quantized checkpoint into plain F32/F16/BF16 weights",
    [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<dequantize_args>();
      app.add_option("in", args->in,
                     "MLX SafeTensors file, or a sharded checkpoint's directory or index (config.json beside it is "
                     "read when present)")
          ->required();
      app.add_option("out", args->out, "Output file; for a sharded input, the output checkpoint directory")
          ->required();
      app.add_option("--dtype", args->dtype_name,
                     "Output dtype of dequantized weights: F32, F16 or BF16 (default: MLX's, the scales' dtype "
                     "for affine layers and BF16 for fp modes)");
      app.add_option("--max-shard-size", args->max_shard_size,
                     "Sharded input only: largest output shard, decimal (5GB) or binary (2GiB) units")
          ->capture_default_str();
      return [args] { return run_dequantize(*args); };
    }};

}  // namespace
}  // namespace st_cli
