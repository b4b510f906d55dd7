// SPDX-License-Identifier: Apache-2.0
// Finding the quantized layers of an MLX checkpoint and resolving their parameters.
#include <algorithm>
#include <array>
#include <span>

#include <fmt/format.h>

#include "safetensors/checkpoint.h"
#include "safetensors/file.h"
#include "safetensors/glob.h"
#include "safetensors/mlx_checkpoint.h"

namespace safetensors::mlx {
namespace {

constexpr std::string_view weight_suffix = ".weight";

error layer_error(std::string_view tensor, std::string message) {
  return make_error(error_code::invalid_argument, std::move(message), std::nullopt, std::string(tensor));
}

std::string shape_text(std::span<const std::uint64_t> s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::string params_text(const quant_params& p) {
  return fmt::format("{} {}-bit g{}", mode_name(p.mode), p.bits, p.group_size);
}

/// Do these parameters explain the shapes? (mode kind, and bits*g*scale_cols == 32*weight_cols)
bool fits(const quant_params& p, bool has_biases, std::uint64_t w_cols, std::uint64_t s_cols) {
  if ((p.mode == quant_mode::affine) != has_biases) return false;
  if (!check_dequantize_params(p)) return false;
  return static_cast<std::uint64_t>(p.bits) * p.group_size * s_cols == 32 * w_cols;
}

/// Parameters from the shapes alone; `ambiguous` when several affine pairs fit.
std::optional<quant_params> infer_from_shapes(bool has_biases, std::uint64_t w_cols, std::uint64_t s_cols,
                                              std::vector<quant_params>& alternatives) {
  if (!has_biases) {
    for (quant_mode m : {quant_mode::nvfp4, quant_mode::mxfp4, quant_mode::mxfp8}) {
      if (fits(default_params(m), false, w_cols, s_cols)) return default_params(m);
    }
    return std::nullopt;
  }
  for (unsigned g : {64U, 32U, 128U}) {  // MLX's default group size first
    for (unsigned bits : {4U, 2U, 3U, 5U, 6U, 8U}) {
      const quant_params p{quant_mode::affine, bits, g};
      if (fits(p, true, w_cols, s_cols)) alternatives.push_back(p);
    }
  }
  if (alternatives.empty()) return std::nullopt;
  return alternatives.front();
}

struct candidate {
  quant_params params;
  param_source source;
};

}  // namespace

std::string_view source_name(param_source s) noexcept {
  switch (s) {
    case param_source::layer_config: return "config.json (layer)";
    case param_source::metadata: return "__metadata__";
    case param_source::config: return "config.json";
    case param_source::shapes: return "shapes";
  }
  return "shapes";
}

const quantized_layer* checkpoint_info::find_weight(std::string_view weight_name) const noexcept {
  auto it = std::lower_bound(layers.begin(), layers.end(), weight_name,
                             [](const quantized_layer& l, std::string_view n) { return l.weight < n; });
  return it != layers.end() && it->weight == weight_name ? &*it : nullptr;
}

bool checkpoint_info::is_companion(std::string_view tensor_name) const noexcept {
  for (std::string_view suffix : {std::string_view(".scales"), std::string_view(".biases")}) {
    if (tensor_name.size() > suffix.size() && tensor_name.ends_with(suffix)) {
      const std::string weight =
          std::string(tensor_name.substr(0, tensor_name.size() - suffix.size())) + std::string(weight_suffix);
      if (const quantized_layer* l = find_weight(weight)) {
        return suffix == ".scales" || !l->biases.empty();
      }
    }
  }
  return false;
}

result<checkpoint_info> describe_checkpoint(const header& h, const quant_config* config) {
  checkpoint_info info;
  info.mlx_format = is_mlx_format(h);
  if (h.metadata()) {
    auto md = params_from_metadata(*h.metadata());
    if (!md) return std::move(md).err();
    info.metadata_default = *md;
  }
  for (const tensor_info& w : h.tensors()) {
    if (!w.name.ends_with(weight_suffix)) continue;
    const std::string path(w.name.substr(0, w.name.size() - weight_suffix.size()));
    const tensor_info* s = h.find(path + ".scales");
    const tensor_info* b = h.find(path + ".biases");
    if (w.type != dtype::U32) {
      if (s != nullptr) {
        return layer_error(w.name, fmt::format("'{}.scales' exists but the weight is {}, not U32 packed codes", path,
                                               dtype_name(w.type)));
      }
      continue;
    }
    if (s == nullptr) {
      if (config != nullptr || info.mlx_format || b != nullptr) {
        return layer_error(w.name, fmt::format("U32 weight of layer '{}' has no '{}.scales'", path, path));
      }
      continue;  // an integer tensor in a file that is not MLX-quantized
    }
    quantized_layer layer;
    layer.path = path;
    layer.weight = std::string(w.name);
    layer.scales = std::string(s->name);
    if (b != nullptr) layer.biases = std::string(b->name);
    layer.scale_type = s->type;
    const auto ws = w.shape;
    const auto ss = s->shape;
    if (ws.size() < 2) {
      return layer_error(w.name,
                         fmt::format("layer '{}': packed weight has rank {}, needs at least 2", path, ws.size()));
    }
    if (ss.size() != ws.size() || !std::equal(ws.begin(), ws.end() - 1, ss.begin())) {
      return layer_error(s->name, fmt::format("layer '{}': scales shape {} does not match weight shape {}", path,
                                              shape_text(ss), shape_text(ws)));
    }
    if (b != nullptr && (b->type != s->type || !std::equal(b->shape.begin(), b->shape.end(), ss.begin(), ss.end()))) {
      return layer_error(b->name,
                         fmt::format("layer '{}': biases {} {} differ from scales {} {}", path, dtype_name(b->type),
                                     shape_text(b->shape), dtype_name(s->type), shape_text(ss)));
    }
    if (b != nullptr && s->type != dtype::F32 && s->type != dtype::F16 && s->type != dtype::BF16) {
      return layer_error(s->name, fmt::format("layer '{}': affine scales must be F32, F16 or BF16, not {}", path,
                                              dtype_name(s->type)));
    }
    if (b == nullptr && s->type != dtype::U8) {
      return layer_error(s->name,
                         fmt::format("layer '{}': {} scales without biases; affine layers need '{}.biases' and "
                                     "fp-mode scales are U8",
                                     path, dtype_name(s->type), path));
    }
    const std::uint64_t w_cols = ws.back();
    const std::uint64_t s_cols = ss.back();
    if (s_cols == 0 || w_cols == 0) {
      return layer_error(w.name, fmt::format("layer '{}': empty last axis", path));
    }

    // Candidates from the configured sources, most trusted first.
    std::array<candidate, 3> source_slots{};
    std::size_t source_count = 0;
    auto add_source = [&](const quant_params& params, param_source from) {
      source_slots[source_count++] = candidate{params, from};
    };
    bool config_says_unquantized = false;
    if (config != nullptr) {
      auto it = config->layers.find(path);
      if (it != config->layers.end()) {
        if (it->second) {
          add_source(*it->second, param_source::layer_config);
        } else {
          config_says_unquantized = true;
        }
      }
    }
    if (config != nullptr && config->global) add_source(*config->global, param_source::config);
    if (info.metadata_default) add_source(*info.metadata_default, param_source::metadata);
    const std::span<const candidate> sources(source_slots.data(), source_count);
    if (config_says_unquantized) {
      info.warnings.push_back(
          fmt::format("layer '{}': config.json marks it unquantized, but '{}' exists", path, layer.scales));
    }
    const candidate* chosen = nullptr;
    for (const candidate& c : sources) {
      if (!fits(c.params, b != nullptr, w_cols, s_cols)) {
        info.warnings.push_back(fmt::format("layer '{}': {} says {}, which does not fit weight {} and scales {}", path,
                                            source_name(c.source), params_text(c.params), shape_text(ws),
                                            shape_text(ss)));
        continue;
      }
      if (chosen == nullptr) {
        chosen = &c;
      } else if (c.params != chosen->params) {
        info.warnings.push_back(fmt::format("layer '{}': {} says {} but {} says {}; using {}", path,
                                            source_name(chosen->source), params_text(chosen->params),
                                            source_name(c.source), params_text(c.params), source_name(chosen->source)));
      }
    }
    if (chosen != nullptr) {
      layer.params = chosen->params;
      layer.source = chosen->source;
    } else {
      std::vector<quant_params> alternatives;
      auto inferred = infer_from_shapes(b != nullptr, w_cols, s_cols, alternatives);
      if (!inferred) {
        return layer_error(w.name, fmt::format("layer '{}': no {} parameters explain weight {} with scales {}", path,
                                               b != nullptr ? "affine" : "fp-mode", shape_text(ws), shape_text(ss)));
      }
      layer.params = *inferred;
      layer.source = param_source::shapes;
      if (alternatives.size() > 1) {
        layer.ambiguous = true;
        std::vector<std::string> names;
        for (const auto& a : alternatives) names.push_back(fmt::format("{}-bit g{}", a.bits, a.group_size));
        info.warnings.push_back(fmt::format("layer '{}': shapes allow {}; assuming {} (MLX's default group size)", path,
                                            fmt::join(names, ", "), names.front()));
      }
    }
    layer.shape.assign(ws.begin(), ws.end());
    layer.shape.back() = w_cols * 32 / layer.params.bits;
    layer.cols = layer.shape.back();
    layer.rows = 1;
    for (std::size_t i = 0; i + 1 < ws.size(); ++i) layer.rows *= ws[i];  // bounded by the validated byte size
    info.layers.push_back(std::move(layer));
  }
  std::sort(info.layers.begin(), info.layers.end(),
            [](const quantized_layer& a, const quantized_layer& c) { return a.weight < c.weight; });
  return info;
}

namespace {

/// A layer's spans, each found by `view(name)` -> result<std::span<const std::byte>>.
template <class View>
result<quantized_ref> make_ref(const quantized_layer& layer, View view) {
  quantized_ref q;
  q.params = layer.params;
  q.rows = layer.rows;
  q.cols = layer.cols;
  q.scale_type = layer.scale_type;
  for (auto [name, span] : {std::pair{&layer.weight, &q.weight}, std::pair{&layer.scales, &q.scales},
                            std::pair{&layer.biases, &q.biases}}) {
    if (name->empty()) continue;
    auto v = view(*name);
    if (!v) return std::move(v).err();
    *span = *v;
  }
  return q;
}

error not_resident(const std::string& tensor) {
  return make_error(error_code::invalid_argument, "layer_ref needs a resident (mmap or memory) file", std::nullopt,
                    tensor);
}

}  // namespace

result<quantized_ref> layer_ref(const file& f, const quantized_layer& layer) {
  if (!f.resident()) return not_resident(layer.weight);
  return make_ref(layer, [&](const std::string& name) -> result<std::span<const std::byte>> {
    auto v = f.view(name);
    if (!v) return std::move(v).err();
    return v->data;
  });
}

result<quantized_ref> layer_ref(const checkpoint& c, const quantized_layer& layer) {
  return make_ref(layer, [&](const std::string& name) -> result<std::span<const std::byte>> {
    const tensor_location* t = c.find(name);
    if (t == nullptr) {
      return make_error(error_code::tensor_not_found, fmt::format("tensor '{}' not found", name), std::nullopt, name);
    }
    if (!c.file_of(*t).resident()) return not_resident(name);
    return c.file_of(*t).view(*t->info).data;
  });
}

bool selected_for_quantization(const tensor_info& t, const quant_params& p, const selection_rules& rules) {
  if (!t.name.ends_with(weight_suffix)) return false;
  if (t.type != dtype::F32 && t.type != dtype::F16 && t.type != dtype::BF16) return false;
  if (t.shape.size() < 2 || p.group_size == 0 || t.shape.back() == 0 || t.shape.back() % p.group_size != 0) {
    return false;
  }
  auto any = [&](const std::vector<std::string>& globs) {
    return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return name_matches(g, t.name); });
  };
  if (!rules.only.empty() && !any(rules.only)) return false;
  return !any(rules.exclude);
}

}  // namespace safetensors::mlx
