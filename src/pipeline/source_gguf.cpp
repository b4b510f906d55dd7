// SPDX-License-Identifier: Apache-2.0
// A GGUF file as a tensor_source: tensors keep their names, shapes become
// row-major, plain types keep theirs and quantized blocks are dequantized to F32 (exact
// for every supported block type) chunk by chunk. GGUF metadata becomes `__metadata__`
// text with its types recorded (gguf_metadata.h), so converting back to GGUF restores it.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "input_size.h"
#include "safetensors/formats/gguf.h"
#include "safetensors/formats/gguf_dequantize.h"
#include "safetensors/formats/gguf_metadata.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {
namespace {

namespace gguf = safetensors::gguf;
using safetensors::dtype;
using safetensors::status;

class gguf_source final : public tensor_source {
 public:
  gguf_source(gguf::reader in, safetensors::metadata_map metadata) : in_(std::move(in)) {
    format_ = "GGUF";
    format_id_ = "gguf";
    metadata_ = std::move(metadata);
    path_ = in_.path();
    input_bytes_ = safetensors::pipeline::detail::file_bytes(path_);
    std::size_t dequantized = 0;
    for (const gguf::tensor_info& t : in_.header().tensors) {
      const std::optional<dtype> plain = gguf::plain_dtype(t.type);
      if (!plain) ++dequantized;
      tensors_.push_back({t.name, plain.value_or(dtype::F32), t.shape});
    }
    if (dequantized > 0)
      notes_.push_back(fmt::format("dequantized {} tensor{} to F32", dequantized, dequantized == 1 ? "" : "s"));
  }

  /// Raw bytes for plain types; else whole blocks at a time, dequantized to float32.
  status read(std::size_t index, const chunk_sink& consume) const override {
    const gguf::tensor_info& t = in_.header().tensors[index];
    status s = read_blocks(t, consume);
    if (!s) {
      safetensors::error e = std::move(s).err();
      if (!e.tensor) e.tensor = t.name;
      return e;
    }
    return {};
  }

 private:
  status read_blocks(const gguf::tensor_info& t, const chunk_sink& consume) const {
    const gguf::type_traits& tr = gguf::traits(t.type);
    const bool plain = gguf::plain_dtype(t.type).has_value();
    const std::size_t blocks_per_chunk = std::max<std::size_t>(1, chunk_bytes / tr.block_bytes);
    const std::uint64_t chunk = blocks_per_chunk * tr.block_bytes;
    std::vector<std::byte> raw;
    std::vector<float> values;
    for (std::uint64_t done = 0; done < t.byte_size; done += chunk) {
      const auto n = static_cast<std::size_t>(std::min(chunk, t.byte_size - done));
      raw.resize(n);
      if (status s = in_.read(t, done, raw); !s) return s;
      if (plain) {
        if (status s = consume(raw); !s) return s;
        continue;
      }
      values.resize(n / tr.block_bytes * tr.block_elements);
      if (status s = gguf::dequantize(t.type, raw, values); !s) return s;
      if (status s = consume(std::as_bytes(std::span(values))); !s) return s;
    }
    return {};
  }

  gguf::reader in_;
};

}  // namespace

result<source_ptr> open_gguf_source(const std::string& path) {
  auto in = gguf::reader::open(path);
  if (!in) return std::move(in).err().with_path(path);
  for (const gguf::tensor_info& t : in->header().tensors) {
    const gguf::type_traits& tr = gguf::traits(t.type);
    if (!tr.dequantizable) {
      return make_error(error_code::unsupported, fmt::format("GGUF type {} cannot be dequantized", tr.name),
                        std::nullopt, t.name)
          .with_path(path);
    }
  }
  auto metadata = gguf::to_safetensors_metadata(in->header().metadata);
  if (!metadata) return std::move(metadata).err().with_path(path);
  return source_ptr(std::make_unique<gguf_source>(std::move(in).value(), std::move(metadata).value()));
}

}  // namespace safetensors::pipeline
