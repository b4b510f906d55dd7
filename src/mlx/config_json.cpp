// SPDX-License-Identifier: Apache-2.0
// The quantization section of mlx-lm's config.json, and the __metadata__ keys.
#include <cerrno>

#include <charconv>
#include <filesystem>

#include <fmt/format.h>
#include <simdjson.h>

#include "safetensors/json_keys.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/readonly_file.h"

namespace safetensors::mlx {
namespace {

namespace dom = simdjson::dom;

error config_error(std::string message) {
  return make_error(error_code::invalid_header_deserialization, "config.json: " + std::move(message));
}

/// Rejects duplicate keys anywhere in `text` (already parsed as JSON).
std::optional<error> check_duplicates(std::string_view text) {
  auto dup = find_duplicate_json_key(text);
  if (!dup) return config_error(dup.err().message);
  if (*dup) return make_error(error_code::duplicate_key, fmt::format("config.json: duplicate key '{}'", **dup));
  return std::nullopt;
}

result<unsigned> small_uint(dom::element value, std::string_view where) {
  std::uint64_t u = 0;
  std::int64_t i = 0;
  if (value.get(u) == simdjson::SUCCESS && u > 0 && u <= 4096) return static_cast<unsigned>(u);
  if (value.get(i) == simdjson::SUCCESS && i > 0 && i <= 4096) return static_cast<unsigned>(i);
  return config_error(fmt::format("{}: expected a positive integer", where));
}

/// A dict of group_size / bits / mode; other keys are ignored. Missing keys take the
/// per-mode defaults (no inheritance from the global values).
result<quant_params> read_params(dom::object obj, std::string_view where) {
  quant_mode mode = quant_mode::affine;
  std::string_view mode_text;
  if (obj["mode"].get(mode_text) == simdjson::SUCCESS) {
    auto m = parse_mode(mode_text);
    if (!m) return config_error(fmt::format("{}: unknown quantization mode '{}'", where, mode_text));
    mode = *m;
  } else if (obj.at_key("mode").error() == simdjson::SUCCESS) {
    return config_error(fmt::format("{}: mode must be a string", where));
  }
  quant_params p = default_params(mode);
  dom::element v;
  if (obj["bits"].get(v) == simdjson::SUCCESS) {
    auto b = small_uint(v, fmt::format("{}.bits", where));
    if (!b) return std::move(b).err();
    p.bits = *b;
  }
  if (obj["group_size"].get(v) == simdjson::SUCCESS) {
    auto g = small_uint(v, fmt::format("{}.group_size", where));
    if (!g) return std::move(g).err();
    p.group_size = *g;
  }
  return p;
}

bool is_param_key(std::string_view k) { return k == "group_size" || k == "bits" || k == "mode"; }
bool is_ignored_key(std::string_view k) {
  return k == "quant_method" || k == "linear_class" || k == "quantization_mode" || k == "quantize_activations";
}

}  // namespace

result<std::optional<quant_config>> parse_config_json(std::string_view text) {
  if (text.size() > max_config_json_bytes) {
    return make_error(error_code::limit_exceeded, fmt::format("config.json has {} bytes, more than the {}-byte limit",
                                                              text.size(), max_config_json_bytes));
  }
  // An empty view may hold a null pointer, which simdjson's copy must not see.
  if (text.empty()) return config_error(simdjson::error_message(simdjson::EMPTY));
  dom::parser parser;
  dom::element root;
  if (auto err = parser.parse(text.data(), text.size(), true).get(root); err != simdjson::SUCCESS) {
    return config_error(simdjson::error_message(err));
  }
  if (auto e = check_duplicates(text)) return std::move(*e);
  dom::object top;
  if (root.get(top) != simdjson::SUCCESS) return config_error("expected a JSON object");
  dom::object section;
  const char* key = "quantization";
  if (top["quantization"].get(section) != simdjson::SUCCESS) {
    key = "quantization_config";
    if (top["quantization_config"].get(section) != simdjson::SUCCESS) return std::optional<quant_config>{};
  }
  quant_config config;
  bool has_global = false;
  for (dom::key_value_pair kv : section) {
    if (is_param_key(kv.key)) {
      has_global = true;
      continue;
    }
    if (is_ignored_key(kv.key)) continue;
    const std::string where = fmt::format("{}['{}']", key, kv.key);
    bool flag = false;
    dom::object layer;
    if (kv.value.get(flag) == simdjson::SUCCESS) {
      config.layers.emplace(std::string(kv.key), flag ? std::optional<quant_params>(quant_params{}) : std::nullopt);
      // `true` means "use the global values": filled in below.
    } else if (kv.value.get(layer) == simdjson::SUCCESS) {
      auto p = read_params(layer, where);
      if (!p) return std::move(p).err();
      config.layers.emplace(std::string(kv.key), *p);
    }
    // Other value types (strings, numbers) are foreign keys: ignored.
  }
  if (has_global) {
    auto p = read_params(section, key);
    if (!p) return std::move(p).err();
    config.global = *p;
  }
  for (dom::key_value_pair kv : section) {
    bool flag = false;
    if (!is_param_key(kv.key) && kv.value.get(flag) == simdjson::SUCCESS && flag) {
      config.layers[std::string(kv.key)] = config.global ? *config.global : default_params(quant_mode::affine);
    }
  }
  return std::optional<quant_config>(std::move(config));
}

result<std::optional<quant_config>> read_config_beside(const std::string& model_path) {
  const std::filesystem::path dir = std::filesystem::path(model_path).parent_path();
  const std::string path = (dir.empty() ? std::filesystem::path("config.json") : dir / "config.json").string();
  auto text = readonly_file::read_all(path, max_config_json_bytes, "config.json");
  if (!text) {
    if (text.err().os_errno == ENOENT) return std::optional<quant_config>{};
    return std::move(text).err();
  }
  auto parsed = parse_config_json(*text);
  if (!parsed) {
    return std::move(parsed).err().with_path(path);
  }
  return parsed;
}

bool is_mlx_format(const header& h) noexcept {
  if (!h.metadata()) return false;
  auto it = h.metadata()->find("format");
  return it != h.metadata()->end() && it->second == "mlx";
}

result<std::optional<quant_params>> params_from_metadata(const metadata_map& metadata) {
  auto get = [&](std::string_view k) -> const std::string* {
    auto it = metadata.find(k);
    return it == metadata.end() ? nullptr : &it->second;
  };
  const std::string* bits = get("quantization_bits");
  const std::string* group = get("quantization_group_size");
  const std::string* mode = get("quantization_mode");
  if (bits == nullptr && group == nullptr && mode == nullptr) return std::optional<quant_params>{};
  quant_params p;
  if (mode != nullptr) {
    auto m = parse_mode(*mode);
    if (!m) {
      return make_error(error_code::invalid_argument,
                        fmt::format("__metadata__: unknown quantization_mode '{}'", *mode));
    }
    p = default_params(*m);
  }
  for (auto [text, field, name] :
       {std::tuple{bits, &p.bits, "quantization_bits"}, std::tuple{group, &p.group_size, "quantization_group_size"}}) {
    if (text == nullptr) continue;
    unsigned v = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc{} || end != text->data() + text->size() || v == 0 || v > 4096) {
      return make_error(error_code::invalid_argument,
                        fmt::format("__metadata__: {} must be a positive decimal integer, not '{}'", name, *text));
    }
    *field = v;
  }
  return std::optional<quant_params>(p);
}

}  // namespace safetensors::mlx
