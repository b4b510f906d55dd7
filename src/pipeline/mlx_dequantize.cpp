// SPDX-License-Identifier: Apache-2.0
// Dequantizing an MLX checkpoint: each quantized layer a bounded piece at a time.
#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "mlx_job.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/pipeline/mlx_rewrite.h"
#include "safetensors/pipeline/output_check.h"
#include "streaming_open.h"

namespace safetensors::pipeline {
namespace {

using detail::byte_progress;
using detail::for_each_layer_piece;
using detail::layer_piece;
using detail::layer_piece_size;
using detail::mlx_input;

bool is_quantization_key(std::string_view k) {
  return k == "quantization_bits" || k == "quantization_group_size" || k == "quantization_mode";
}

/// Bytes of tensor `name` (0 when absent: the layer description has been checked).
std::uint64_t tensor_bytes(const mlx_input& in, const std::string& name) {
  const auto* t = name.empty() ? nullptr : in.source().find(name);
  return t == nullptr ? 0 : t->info->byte_size();
}

/// Dequantizes one layer into `out`, a piece at a time read from the input (whole rows, or
/// parts of a row when one row's output passes the chunk).
status write_layer(const mlx_input& in, const mlx::quantized_layer& layer, dtype out_type, const chunk_sink& out,
                   byte_progress& done) {
  if (layer.rows == 0 || layer.cols == 0) return {};
  // The layer was checked: its columns are whole groups (a row at a time otherwise).
  const std::uint64_t group = layer.cols % layer.params.group_size == 0 ? layer.params.group_size : layer.cols;
  const std::uint64_t groups_per_row = layer.cols / group;
  const std::size_t out_bytes = dtype_bits(out_type) / 8;
  const std::uint64_t w_group = tensor_bytes(in, layer.weight) / layer.rows / groups_per_row;
  const std::uint64_t s_group = tensor_bytes(in, layer.scales) / layer.rows / groups_per_row;
  const bool affine = !layer.biases.empty();
  const layer_piece size = layer_piece_size(layer.rows, layer.cols, group, out_bytes);
  const std::uint64_t most = size.rows * size.cols;
  const std::uint64_t most_groups = most / group;
  std::vector<std::byte> buffer(static_cast<std::size_t>(most * out_bytes));
  std::vector<std::byte> w(static_cast<std::size_t>(most_groups * w_group));
  std::vector<std::byte> s(static_cast<std::size_t>(most_groups * s_group));
  std::vector<std::byte> b(affine ? s.size() : 0);
  return for_each_layer_piece(layer.rows, layer.cols, size, [&](const layer_piece& piece) -> status {
    const std::uint64_t first_group = piece.row * groups_per_row + piece.col / group;  // groups in row-major order
    const auto n_groups = static_cast<std::size_t>(piece.rows * (piece.cols / group));
    mlx::quantized_ref part;
    part.params = layer.params;
    part.rows = piece.rows;
    part.cols = piece.cols;
    part.scale_type = layer.scale_type;
    part.weight = std::span<const std::byte>(w.data(), n_groups * w_group);
    part.scales = std::span<const std::byte>(s.data(), n_groups * s_group);
    if (affine) part.biases = std::span<const std::byte>(b.data(), n_groups * s_group);
    for (auto [name, dst, per_group] :
         {std::tuple{&layer.weight, w.data(), w_group}, std::tuple{&layer.scales, s.data(), s_group},
          std::tuple{&layer.biases, b.data(), s_group}}) {
      if (name->empty()) continue;
      if (auto got = in.read(*name, first_group * per_group, std::span<std::byte>(dst, n_groups * per_group)); !got) {
        return got;
      }
    }
    const std::span<std::byte> dst(buffer.data(), static_cast<std::size_t>(piece.rows * piece.cols * out_bytes));
    if (auto st = mlx::dequantize(part, out_type, dst); !st) {
      error e = std::move(st).err();
      e.tensor = layer.weight;
      e.message = fmt::format("layer '{}': {}", layer.path, e.message);
      return e;
    }
    if (auto st = out(dst); !st) return st;
    return done.advance(n_groups * (w_group + s_group * (affine ? 2 : 1)));
  });
}

}  // namespace

result<mlx_rewrite_summary> dequantize(checkpoint c, const std::string& in_path, const std::string& out,
                                       const dequantize_options& options) {
  if (options.to && *options.to != dtype::F32 && *options.to != dtype::F16 && *options.to != dtype::BF16) {
    return make_error(error_code::invalid_argument,
                      fmt::format("dequantize to F32, F16 or BF16, not {}", dtype_name(*options.to)));
  }
  auto job = detail::open_mlx_job(std::move(c), in_path, options.on_warning);
  if (!job) return std::move(job).err();
  const mlx_input& in = job->in;
  const mlx::checkpoint_info& info = job->info;
  mlx_rewrite_summary summary;
  summary.layers = info.layers.size();
  summary.sharded = in.directory_output();
  summary.warnings = std::move(job->warnings);

  std::vector<tensor_spec> specs;
  for (const auto& t : in.header().tensors()) {
    if (info.is_companion(t.name)) continue;
    if (const auto* layer = info.find_weight(t.name)) {
      const dtype mlx_choice = layer->params.mode == mlx::quant_mode::affine ? layer->scale_type : dtype::BF16;
      specs.push_back({layer->weight, options.to.value_or(mlx_choice), layer->shape});
    } else {
      specs.push_back({std::string(t.name), t.type, {t.shape.begin(), t.shape.end()}});
    }
  }
  summary.tensors = specs.size();
  std::optional<metadata_map> metadata;
  if (in.header().metadata()) {
    metadata_map kept;
    for (const auto& [k, v] : *in.header().metadata()) {
      if (!is_quantization_key(k)) kept.emplace(k, v);
    }
    metadata = std::move(kept);
  }
  if (!in.directory_output()) {
    if (auto s = check_output(out, input_files(in.source())); !s) return std::move(s).err();
  }
  if (auto s = detail::check_budget(in, specs, options.max_output_bytes, out); !s) return std::move(s).err();
  byte_progress done(options.progress, in.header().data_size());
  auto produce = [&](std::string_view name, dtype type, const chunk_sink& sink) -> status {
    if (const auto* layer = info.find_weight(name)) return write_layer(in, *layer, type, sink, done);
    return in.copy(name, [&](std::span<const std::byte> chunk) -> status {
      if (auto s = sink(chunk); !s) return s;
      return done.advance(chunk.size());
    });
  };

  if (in.directory_output()) {
    auto s = detail::write_sharded(
        out, in, specs,
        [&](std::size_t i, const chunk_sink& sink) { return produce(specs[i].name, specs[i].type, sink); },
        options.max_shard_bytes, metadata);
    if (!s) return std::move(s).err().with_path(out);
    return summary;
  }
  write_options write;
  write.metadata = std::move(metadata);
  auto plan = write_plan::make(std::move(specs), write);
  if (!plan) return std::move(plan).err().with_path(out);
  auto writer = stream_writer::create(out, std::move(plan).value());
  if (!writer) return std::move(writer).err().with_path(out);
  for (const auto& planned : writer->plan().tensors()) {
    if (auto s = produce(planned.name, planned.type, detail::append_to(*writer, planned.name)); !s) {
      return std::move(s).err().with_path(out);
    }
  }
  if (auto s = writer->commit(); !s) return std::move(s).err().with_path(out);
  return summary;
}

result<mlx_rewrite_summary> dequantize(const std::string& in, const std::string& out,
                                       const dequantize_options& options) {
  auto c = open_streaming_checkpoint(in);
  if (!c) return std::move(c).err();
  return dequantize(std::move(c).value(), in, out, options);
}

}  // namespace safetensors::pipeline
