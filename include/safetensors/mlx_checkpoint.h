// SPDX-License-Identifier: Apache-2.0
/// \file mlx_checkpoint.h
/// Finding the quantized layers of an MLX checkpoint and their parameters.
///
/// A layer `P` is quantized when `P.scales` sits next to a U32 `P.weight`; it is affine
/// when `P.biases` exists too. Its bits, group size and mode come from, in order of trust:
/// 1. a per-layer entry of config.json's `quantization` (or `quantization_config`); such an
///    entry does not inherit the global values: missing keys take the per-mode defaults;
/// 2. the file-wide `__metadata__` keys `quantization_bits`, `quantization_group_size`,
///    `quantization_mode`, and config.json's global values;
/// 3. the tensor shapes, which fix only `bits * group_size` (affine) or the mode (fp).
/// A source that contradicts the shapes is ignored with a warning. When metadata and
/// config.json both fit the shapes but disagree, config.json wins (MLX loads it) with a
/// warning. When only the shapes are left and they allow several affine (bits, group size)
/// pairs (4/64, 8/32 and 2/128 all give 256), group size 64, MLX's default, is chosen and
/// the layer is marked `ambiguous`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/header.h"
#include "safetensors/mlx_quant.h"

namespace safetensors {
class file;
class checkpoint;
}  // namespace safetensors

namespace safetensors::mlx {

/// config.json larger than this is refused (model configs are a few KiB).
inline constexpr std::uint64_t max_config_json_bytes = 16U << 20;

/// The quantization section of an mlx-lm config.json.
struct quant_config {
  std::optional<quant_params> global;
  /// Module path -> parameters, or nullopt for `false` (left unquantized).
  std::map<std::string, std::optional<quant_params>, std::less<>> layers;
};

/// Parses config.json text. nullopt when it has neither `quantization` nor
/// `quantization_config`. Errors (InvalidHeaderDeserialization / DuplicateKey): malformed
/// JSON, duplicate keys at any depth, wrong value types, unknown modes.
[[nodiscard]] result<std::optional<quant_config>> parse_config_json(std::string_view text);

/// Reads `config.json` in the directory of `model_path`; nullopt when there is none.
[[nodiscard]] result<std::optional<quant_config>> read_config_beside(const std::string& model_path);

/// True when `__metadata__.format == "mlx"`.
[[nodiscard]] bool is_mlx_format(const header& h) noexcept;

/// The file-wide default of `__metadata__` (decimal strings); nullopt when no key is set.
/// Missing keys take the per-mode defaults. Errors: InvalidArgument for bad values.
[[nodiscard]] result<std::optional<quant_params>> params_from_metadata(const metadata_map& metadata);

/// Where a layer's parameters came from.
enum class param_source : std::uint8_t { layer_config, metadata, config, shapes };
[[nodiscard]] std::string_view source_name(param_source s) noexcept;

/// One quantized layer of a file.
struct quantized_layer {
  std::string path;    ///< module path P
  std::string weight;  ///< P.weight (U32)
  std::string scales;  ///< P.scales
  std::string biases;  ///< P.biases, empty for fp modes
  quant_params params;
  dtype scale_type = dtype::BF16;
  std::vector<std::uint64_t> shape;  ///< logical weight shape [..., out, in]
  std::uint64_t rows = 0;            ///< product of shape without its last axis
  std::uint64_t cols = 0;            ///< in
  param_source source = param_source::shapes;
  bool ambiguous = false;  ///< shapes alone, several (bits, group size) fit
};

/// The quantized layers of a file, by weight name.
struct checkpoint_info {
  bool mlx_format = false;
  std::optional<quant_params> metadata_default;
  std::vector<quantized_layer> layers;  ///< sorted by weight name
  std::vector<std::string> warnings;

  [[nodiscard]] const quantized_layer* find_weight(std::string_view weight_name) const noexcept;
  /// True for `P.scales` / `P.biases` of a quantized layer.
  [[nodiscard]] bool is_companion(std::string_view tensor_name) const noexcept;
};

/// Finds and checks every quantized layer. `config` may be null. Errors name the tensor:
/// U32 `*.weight` without scales, scales/biases whose shape or dtype does not fit the
/// weight, shapes no parameters can explain (InvalidArgument); bad metadata values.
[[nodiscard]] result<checkpoint_info> describe_checkpoint(const header& h, const quant_config* config = nullptr);

/// The kernel view of a layer in an open file (mmap or memory backend).
[[nodiscard]] result<quantized_ref> layer_ref(const file& f, const quantized_layer& layer);
/// The same for a checkpoint, whose shards may hold a layer's weight, scales and biases
/// separately (describe it with a header over all shards). Errors: TensorNotFound, and
/// InvalidArgument for a shard that is not resident.
[[nodiscard]] result<quantized_ref> layer_ref(const checkpoint& c, const quantized_layer& layer);

/// Which tensors `quantize` would quantize, like mlx-lm's default predicate: float
/// (F32/F16/BF16) `*.weight` tensors of rank >= 2 whose last axis divides by the group
/// size, matching one of `only` (all when empty) and none of `exclude` (patterns as in glob.h's
/// name_matches, the rule of every command).
struct selection_rules {
  std::vector<std::string> only;
  std::vector<std::string> exclude;
};
[[nodiscard]] bool selected_for_quantization(const tensor_info& t, const quant_params& p, const selection_rules& rules);

}  // namespace safetensors::mlx
