// SPDX-License-Identifier: Apache-2.0
// Quantizing a checkpoint into the MLX layout: each chosen layer a chunk of rows at a time.

#include <algorithm>
#include <map>
#include <span>

#include <fmt/format.h>

#include "mlx_job.h"
#include "safetensors/atomic_file.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/json_text.h"
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

struct planned_layer {
  const tensor_info* source = nullptr;  // entry in mlx_input::header()
  std::string path;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

/// Where a layer's three outputs go.
struct layer_sinks {
  chunk_sink weight, scales, biases;
};

/// Quantizes one layer a piece at a time (whole rows, or parts of a row when one row passes the
/// chunk), read from the input as needed; `done` (when not null) counts the input bytes consumed.
status write_layer(const mlx_input& in, const planned_layer& layer, const mlx::quant_params& p, const layer_sinks& out,
                   byte_progress* done) {
  if (layer.rows == 0 || layer.cols == 0) return {};
  const std::uint64_t in_bytes = dtype_bits(layer.source->type) / 8;  // F32, F16 or BF16
  const std::uint64_t group = p.group_size;                           // the layer was chosen for whole groups per row
  const std::uint64_t w_group = group * p.bits / 8;
  const dtype st = mlx::scale_dtype_for(p.mode, layer.source->type);
  const std::uint64_t s_group = dtype_bits(st) / 8;
  const bool affine = p.mode == mlx::quant_mode::affine;
  const layer_piece size = layer_piece_size(layer.rows, layer.cols, group, in_bytes);
  const std::uint64_t most = size.rows * size.cols;
  std::vector<std::byte> input(static_cast<std::size_t>(most * in_bytes));
  std::vector<std::byte> w(static_cast<std::size_t>(most / group * w_group));
  std::vector<std::byte> s(static_cast<std::size_t>(most / group * s_group));
  std::vector<std::byte> b(affine ? s.size() : 0);
  return for_each_layer_piece(layer.rows, layer.cols, size, [&](const layer_piece& piece) -> status {
    const auto n_groups = static_cast<std::size_t>(piece.rows * piece.cols / group);
    const std::span<std::byte> values(input.data(), static_cast<std::size_t>(piece.rows * piece.cols * in_bytes));
    const std::uint64_t offset = (piece.row * layer.cols + piece.col) * in_bytes;
    if (auto got = in.read(layer.source->name, offset, values); !got) return got;
    const mlx::quantized_out parts{
        {w.data(), n_groups * w_group}, {s.data(), n_groups * s_group}, {b.data(), affine ? n_groups * s_group : 0}};
    if (auto st2 = mlx::quantize(layer.source->type, values, piece.rows, piece.cols, p, parts); !st2) {
      error e = std::move(st2).err();
      e.tensor = std::string(layer.source->name);
      return e;
    }
    for (auto [sink, span] : {std::pair{&out.weight, parts.weight}, std::pair{&out.scales, parts.scales},
                              std::pair{&out.biases, parts.biases}}) {
      if (!affine && sink == &out.biases) continue;
      if (auto st2 = (*sink)(span); !st2) return st2;
    }
    return done != nullptr ? done->advance(values.size()) : status{};
  });
}

std::string config_fragment(const mlx::quant_params& p) {
  const std::string body = fmt::format("{{\"group_size\": {}, \"bits\": {}, \"mode\": {}}}", p.group_size, p.bits,
                                       json_quote(mlx::mode_name(p.mode)));
  return fmt::format("{{\n  \"quantization\": {},\n  \"quantization_config\": {}\n}}\n", body, body);
}

/// Writes the config fragment as every output is written (atomic_file.h: a fresh temporary
/// renamed over it, symlinks resolved under the protected_symlinks rule).
status write_config_fragment(const std::string& path, const std::string& text) {
  auto file = atomic_file::create(path, text.size());
  if (!file) return std::move(file).err();
  if (auto s = file->write_at(0, std::as_bytes(std::span(text))); !s) return s;
  return file->commit();
}

/// The layers `p` and `select` choose in `in`, and the output's tensor list.
struct quantize_plan {
  std::vector<tensor_spec> specs;
  std::vector<planned_layer> layers;
};

result<quantize_plan> plan_quantize(const mlx_input& in, const mlx::checkpoint_info& info, const mlx::quant_params& p,
                                    const tensor_filter& select, const std::string& in_path) {
  std::vector<std::string_view> names;
  for (const auto& t : in.header().tensors()) names.push_back(t.name);
  if (auto s = select.require_matches(names, in_path); !s) return std::move(s).err();
  const mlx::selection_rules rules{select.only, select.exclude};
  quantize_plan plan;
  for (const auto& t : in.header().tensors()) {
    const bool already = info.find_weight(t.name) != nullptr || info.is_companion(t.name);
    if (!already && mlx::selected_for_quantization(t, p, rules)) {
      planned_layer layer{&t, std::string(t.name.substr(0, t.name.size() - 7)), 1, t.shape.back()};
      for (std::size_t i = 0; i + 1 < t.shape.size(); ++i) layer.rows *= t.shape[i];
      std::vector<std::uint64_t> shape(t.shape.begin(), t.shape.end());
      shape.back() = layer.cols * p.bits / 32;
      plan.specs.push_back({layer.path + ".weight", dtype::U32, shape});
      shape.back() = layer.cols / p.group_size;
      const dtype st = mlx::scale_dtype_for(p.mode, t.type);
      plan.specs.push_back({layer.path + ".scales", st, shape});
      if (p.mode == mlx::quant_mode::affine) plan.specs.push_back({layer.path + ".biases", st, shape});
      plan.layers.push_back(layer);
      continue;
    }
    if (!already && !select.only.empty() && t.name.ends_with(".weight") && t.shape.size() >= 2 &&
        select.selects(t.name) && t.shape.back() % p.group_size != 0) {
      // Asked for by name but impossible: say so instead of silently skipping it.
      return make_error(error_code::invalid_argument,
                        fmt::format("group size {} does not divide the row length {}", p.group_size, t.shape.back()),
                        std::nullopt, std::string(t.name))
          .with_path(in_path);
    }
    plan.specs.push_back({std::string(t.name), t.type, {t.shape.begin(), t.shape.end()}});
  }
  if (plan.layers.empty()) {
    // A file claiming quantization_bits with nothing quantized would mislead every loader.
    return make_error(error_code::invalid_argument,
                      "no tensor to quantize (float *.weight tensors of rank >= 2 whose last axis divides by the "
                      "group size, not yet quantized, selected by only/exclude)")
        .with_path(in_path);
  }
  return plan;
}

/// A sharded output: tensors are written one after the other, so while a layer's codes stream
/// out its scales and biases (at most half the codes' size, 1/8 for 4-bit g64) are kept for
/// their turn.
class sharded_layers {
 public:
  sharded_layers(const mlx_input& in, const quantize_plan& plan, const mlx::quant_params& p, byte_progress& done)
      : in_(in), plan_(plan), p_(p), done_(done) {}

  status produce(std::size_t i, const chunk_sink& sink) {
    const std::string& name = plan_.specs[i].name;
    const auto dot = name.rfind('.');
    const std::string_view path = std::string_view(name).substr(0, dot);
    const std::string_view suffix = dot == std::string::npos ? std::string_view() : std::string_view(name).substr(dot);
    const auto layer =
        std::find_if(plan_.layers.begin(), plan_.layers.end(), [&](const planned_layer& l) { return l.path == path; });
    if (layer == plan_.layers.end() || (suffix != ".weight" && suffix != ".scales" && suffix != ".biases")) {
      return in_.copy(name, [&](std::span<const std::byte> chunk) -> status {
        if (auto s = sink(chunk); !s) return s;
        return done_.advance(chunk.size());
      });
    }
    if (suffix == ".weight") {
      return write_layer(in_, *layer, p_, {sink, keep(layer->path + ".scales"), keep(layer->path + ".biases")}, &done_);
    }
    if (!held_.contains(name)) {  // its weight has not been written (yet): compute again
      const chunk_sink discard = [](std::span<const std::byte>) -> status { return {}; };
      if (auto s = write_layer(in_, *layer, p_, {discard, keep(layer->path + ".scales"), keep(layer->path + ".biases")},
                               nullptr);
          !s) {
        return s;
      }
    }
    const auto it = held_.find(name);
    if (it == held_.end()) return {};  // write_layer always fills it; the size check catches a gap
    const std::vector<std::byte> bytes = std::move(it->second);
    held_.erase(it);
    return sink(bytes);
  }

 private:
  chunk_sink keep(std::string name) {
    return [this, name = std::move(name)](std::span<const std::byte> chunk) -> status {
      auto& buffer = held_[name];
      buffer.insert(buffer.end(), chunk.begin(), chunk.end());
      return {};
    };
  }

  const mlx_input& in_;
  const quantize_plan& plan_;
  const mlx::quant_params& p_;
  byte_progress& done_;
  std::map<std::string, std::vector<std::byte>, std::less<>> held_;
};

}  // namespace

result<mlx_rewrite_summary> quantize(checkpoint c, const std::string& in_path, const std::string& out,
                                     const quantize_options& options) {
  const mlx::quant_params& p = options.params;
  if (auto s = mlx::check_quantize_params(p); !s) return std::move(s).err();
  auto job = detail::open_mlx_job(std::move(c), in_path, {});
  if (!job) return std::move(job).err();
  const mlx_input& in = job->in;
  auto planned = plan_quantize(in, job->info, p, options.select, in_path);
  if (!planned) return std::move(planned).err();
  quantize_plan& plan = *planned;
  mlx_rewrite_summary summary;
  summary.layers = plan.layers.size();
  summary.tensors = plan.specs.size();
  summary.sharded = in.directory_output();
  summary.warnings = std::move(job->warnings);
  // Every output is checked before any is written.
  const std::vector<std::string> inputs = input_files(in.source());
  if (!options.config_out.empty()) {
    if (auto s = check_output(options.config_out, inputs); !s) return std::move(s).err();
  }
  if (!in.directory_output()) {
    if (auto s = check_output(out, inputs); !s) return std::move(s).err();
  }
  if (auto s = detail::check_budget(in, plan.specs, options.max_output_bytes, out); !s) return std::move(s).err();
  metadata_map metadata = in.header().metadata().value_or(metadata_map{});
  metadata["format"] = "mlx";
  metadata["quantization_bits"] = std::to_string(p.bits);
  metadata["quantization_group_size"] = std::to_string(p.group_size);
  metadata["quantization_mode"] = std::string(mlx::mode_name(p.mode));
  byte_progress done(options.progress, in.header().data_size());

  if (in.directory_output()) {
    sharded_layers layers(in, plan, p, done);
    auto s = detail::write_sharded(
        out, in, plan.specs, [&](std::size_t i, const chunk_sink& sink) { return layers.produce(i, sink); },
        options.max_shard_bytes, metadata);
    if (!s) return std::move(s).err().with_path(out);
  } else {
    write_options write;
    write.metadata = std::move(metadata);
    auto written = write_plan::make(std::move(plan.specs), write);
    if (!written) return std::move(written).err().with_path(out);
    auto writer = stream_writer::create(out, std::move(written).value());
    if (!writer) return std::move(writer).err().with_path(out);
    for (const auto& layer : plan.layers) {
      const layer_sinks sinks{detail::append_to(*writer, layer.path + ".weight"),
                              detail::append_to(*writer, layer.path + ".scales"),
                              detail::append_to(*writer, layer.path + ".biases")};
      if (auto s = write_layer(in, layer, p, sinks, &done); !s) return std::move(s).err().with_path(in_path);
    }
    for (const auto& t : in.header().tensors()) {
      const bool is_layer =
          std::any_of(plan.layers.begin(), plan.layers.end(), [&](const planned_layer& l) { return l.source == &t; });
      if (is_layer) continue;
      const auto sink = detail::append_to(*writer, std::string(t.name));
      auto s = in.copy(t.name, [&](std::span<const std::byte> chunk) -> status {
        if (auto a = sink(chunk); !a) return a;
        return done.advance(chunk.size());
      });
      if (!s) return std::move(s).err().with_path(out);
    }
    if (auto s = writer->commit(); !s) return std::move(s).err().with_path(out);
  }
  if (!options.config_out.empty()) {
    if (auto s = write_config_fragment(options.config_out, config_fragment(p)); !s) {
      return std::move(s).err().with_path(options.config_out);
    }
  }
  return summary;
}

result<mlx_rewrite_summary> quantize(const std::string& in, const std::string& out, const quantize_options& options) {
  auto c = open_streaming_checkpoint(in);
  if (!c) return std::move(c).err();
  return quantize(std::move(c).value(), in, out, options);
}

}  // namespace safetensors::pipeline
