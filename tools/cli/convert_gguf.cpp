// SPDX-License-Identifier: Apache-2.0
// `convert IN.gguf OUT.safetensors [--dtype F32|F16|BF16|keep]`: GGUF tensors keep their
// names, shapes become row-major, quantized blocks are dequantized chunk by chunk and
// streamed into the atomic SafeTensors writer; GGUF metadata goes to __metadata__ as
// text with its types recorded (gguf_metadata.h), so `convert OUT.safetensors X.gguf`
// restores it.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "command.h"
#include "count_text.h"
#include "foreign_formats.h"
#include "input.h"
#include "progress.h"
#include "report.h"
#include "safetensors/convert.h"
#include "safetensors/formats/gguf.h"
#include "safetensors/formats/gguf_dequantize.h"
#include "safetensors/formats/gguf_metadata.h"
#include "safetensors/writer.h"

namespace st_cli {
namespace {

namespace gguf = safetensors::gguf;
using safetensors::dtype;
using safetensors::status;

/// The output dtype of a tensor. `keep`: plain types keep theirs, quantized ones become
/// F32 (exact for every supported block type). F32/F16/BF16: floating and quantized
/// tensors take it; integer tensors keep their type (ids and counts, never rounded).
dtype output_dtype(gguf::ggml_type type, const std::string& requested) {
  const std::optional<dtype> plain = gguf::plain_dtype(type);
  const bool integer = plain && !safetensors::dtype_is_float(*plain);
  if (requested == "keep" || integer) return plain.value_or(dtype::F32);
  return *safetensors::parse_dtype(requested);
}

safetensors::error tensor_error(safetensors::error_code code, std::string message, const gguf::tensor_info& t) {
  return safetensors::make_error(code, std::move(message), std::nullopt, t.name);
}

/// Streams one tensor: raw bytes when the dtype is unchanged, else whole blocks at a time
/// decoded to float32 and encoded as `to`.
status copy_tensor(const gguf::reader& in, const gguf::tensor_info& t, dtype to, safetensors::stream_writer& out,
                   progress& bar) {
  const gguf::type_traits& tr = gguf::traits(t.type);
  const std::optional<dtype> plain = gguf::plain_dtype(t.type);
  const std::size_t blocks_per_chunk = std::max<std::size_t>(1, chunk_bytes / tr.block_bytes);
  const std::uint64_t chunk = blocks_per_chunk * tr.block_bytes;
  std::vector<std::byte> raw;
  std::vector<float> values;
  std::vector<std::byte> encoded;
  for (std::uint64_t done = 0; done < t.byte_size; done += chunk) {
    const auto n = static_cast<std::size_t>(std::min(chunk, t.byte_size - done));
    raw.resize(n);
    if (status s = in.read(t, done, raw); !s) return s;
    if (plain == to) {
      if (status s = out.append(t.name, raw); !s) return s;
    } else {
      values.resize(n / tr.block_bytes * tr.block_elements);
      if (status s = gguf::dequantize(t.type, raw, values); !s) return s;
      encoded.resize(values.size() * safetensors::dtype_bits(to) / 8);
      if (status s = safetensors::encode_from_f32(to, values, encoded); !s) return s;
      if (status s = out.append(t.name, encoded); !s) return s;
    }
    bar.advance(n);
  }
  return {};
}

}  // namespace

run_result convert_gguf_to_safetensors(const convert_args& args) {
  auto in = gguf::reader::open(args.in);
  if (!in) return with_path(in.err(), args.in);
  const gguf::header& h = in->info();
  std::vector<safetensors::tensor_spec> specs;
  std::uint64_t total = 0;
  std::size_t dequantized = 0;
  for (const gguf::tensor_info& t : h.tensors) {
    const gguf::type_traits& tr = gguf::traits(t.type);
    if (!tr.dequantizable) {
      return with_path(tensor_error(safetensors::error_code::unsupported,
                                    fmt::format("GGUF type {} cannot be dequantized", tr.name), t),
                       args.in);
    }
    const dtype to = output_dtype(t.type, args.dtype);
    if (gguf::plain_dtype(t.type) != to) ++dequantized;
    specs.push_back({t.name, to, t.shape});
    total += t.byte_size;
  }
  auto metadata = gguf::to_safetensors_metadata(h.metadata);
  if (!metadata) return with_path(metadata.err(), args.in);
  safetensors::write_options options;
  options.metadata = std::move(metadata).value();
  auto plan = safetensors::write_plan::make(std::move(specs), options);
  if (!plan) return with_path(plan.err(), args.out);
  auto out = safetensors::stream_writer::create(args.out, std::move(plan).value());
  if (!out) return with_path(out.err(), args.out);
  progress bar("convert", total, !args.quiet);
  for (const gguf::tensor_info& t : h.tensors) {
    if (status s = copy_tensor(*in, t, output_dtype(t.type, args.dtype), *out, bar); !s) {
      safetensors::error e = std::move(s).err();
      if (!e.tensor) e.tensor = t.name;
      return with_path(e, args.in);
    }
  }
  if (status s = out->commit(); !s) return with_path(s.err(), args.out);
  bar.finish();
  if (!args.quiet) {
    fmt::print("{}: {} ({} converted to {}), {}\n", args.out, count_of(h.tensors.size(), "tensor"),
               with_commas(dequantized), args.dtype == "keep" ? "F32" : args.dtype,
               count_of(h.metadata.size(), "metadata key"));
  }
  return exit_ok;
}

}  // namespace st_cli
