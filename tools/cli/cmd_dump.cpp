// SPDX-License-Identifier: Apache-2.0
// `safetensors dump FILE TENSOR [--slice "0:8, ::2"] [--limit N] [--json]`: prints a
// tensor's values (or a numpy-style slice of them) as nested lists, like numpy.
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "checkpoint_tensors.h"
#include "command.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/convert.h"
#include "safetensors/json_text.h"
#include "safetensors/slice.h"

namespace st_cli {
namespace {

struct dump_args {
  std::string path;
  std::string tensor;
  std::string slice;
  std::uint64_t limit = 1000;
  bool json = false;
};

template <class T>
std::string integer_at(std::span<const std::byte> bytes, std::size_t i) {
  T v{};
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return fmt::format("{}", v);
}

/// Element `i` as text. Integers are read exactly (64-bit values exceed a double's 53 bits).
std::string integer_text(safetensors::dtype t, std::span<const std::byte> bytes, std::size_t i, bool json) {
  using safetensors::dtype;
  switch (t) {
    case dtype::BOOL: return bytes[i] != std::byte{0} ? (json ? "true" : "True") : (json ? "false" : "False");
    case dtype::U8: return integer_at<std::uint8_t>(bytes, i);
    case dtype::I8: return integer_at<std::int8_t>(bytes, i);
    case dtype::U16: return integer_at<std::uint16_t>(bytes, i);
    case dtype::I16: return integer_at<std::int16_t>(bytes, i);
    case dtype::U32: return integer_at<std::uint32_t>(bytes, i);
    case dtype::I32: return integer_at<std::int32_t>(bytes, i);
    case dtype::U64: return integer_at<std::uint64_t>(bytes, i);
    case dtype::I64: return integer_at<std::int64_t>(bytes, i);
    default: return "?";
  }
}

/// The shortest decimal that reads back as the same value of type `t` (numpy prints
/// float16 0.1 as "0.1", not as the float32 "0.099975586"). Types narrower than 32 bits.
std::string shortest_in_type(safetensors::dtype t, double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  constexpr std::size_t group = 8;  // whole bytes for every sub-byte type
  std::array<float, group> candidate{};
  std::array<std::byte, group * 2> encoded{};
  std::array<double, group> back{};
  const std::size_t bytes = group * safetensors::dtype_bits(t) / 8;
  for (int digits = 1; digits < 9; ++digits) {
    std::string text = fmt::format("{:.{}g}", v, digits);
    candidate.fill(std::strtof(text.c_str(), nullptr));
    if (!safetensors::encode_from_f32(t, candidate, std::span(encoded).first(bytes))) continue;
    if (!safetensors::decode_to_f64(t, std::span(encoded).first(bytes), back)) continue;
    if (back[0] == v) return text;
  }
  return fmt::format("{}", static_cast<float>(v));
}

/// Nested brackets, last dimension on one line, at most `limit` values (0: all). In JSON
/// mode: nested arrays on one line, cut off without a "..." marker (see truncated()).
class nested_printer {
 public:
  nested_printer(std::span<const std::uint64_t> shape, std::uint64_t limit,
                 std::function<std::string(std::size_t)> value, bool json = false)
      : shape_(shape), limit_(limit), value_(std::move(value)), json_(json) {}

  std::string run() {
    emit(0);
    return out_;
  }
  [[nodiscard]] bool truncated() const { return truncated_; }

 private:
  [[nodiscard]] std::string separator(std::size_t dim) const {
    if (json_) return ",";
    return dim + 1 == shape_.size() ? ", " : ",\n" + std::string(dim + 1, ' ');
  }

  void emit(std::size_t dim) {
    if (dim == shape_.size()) {
      out_ += value_(index_++);
      return;
    }
    out_ += "[";
    for (std::uint64_t i = 0; i < shape_[dim]; ++i) {
      const bool cut = limit_ != 0 && index_ == limit_;
      if (cut && json_) {
        truncated_ = true;
        break;
      }
      if (i > 0) out_ += separator(dim);
      if (cut) {
        out_ += "...";
        truncated_ = true;
        break;
      }
      emit(dim + 1);
      if (truncated_) break;
    }
    out_ += "]";
  }

  std::span<const std::uint64_t> shape_;
  std::uint64_t limit_;
  std::function<std::string(std::size_t)> value_;
  bool json_;
  std::size_t index_ = 0;
  bool truncated_ = false;
  std::string out_;
};

run_result run_dump(const dump_args& args) {
  auto c = open_checkpoint_input(args.path);
  if (!c) return std::move(c).err();
  const safetensors::tensor_location* where = c->find(args.tensor);
  if (where == nullptr) {
    auto e = safetensors::make_error(safetensors::error_code::tensor_not_found,
                                     fmt::format("tensor '{}' not found", args.tensor), std::nullopt, args.tensor);
    e.path = args.path;
    return e;
  }
  const safetensors::file& f = c->file_of(*where);
  auto spec = safetensors::parse_slice_spec(args.slice);
  if (!spec) return std::move(spec).err();
  auto plan = safetensors::plan_slice(f, args.tensor, *spec);
  if (!plan) return std::move(plan).err();
  std::vector<std::byte> bytes(plan->byte_size);
  if (auto s = safetensors::read_slice(f, *plan, bytes); !s) return std::move(s).err();

  const safetensors::dtype type = where->info->type;
  std::uint64_t count = 1;
  for (auto d : plan->shape) count *= d;
  std::function<std::string(std::size_t)> value;
  std::vector<double> decoded;
  if (safetensors::dtype_is_float(type)) {
    const bool complex = type == safetensors::dtype::C64;
    decoded.resize(complex ? count * 2 : count);
    if (auto s = safetensors::decode_to_f64(complex ? safetensors::dtype::F32 : type, bytes, decoded); !s) {
      return std::move(s).err();
    }
    // JSON has no NaN or infinity: null, as everywhere in our JSON.
    const auto number = [json = args.json](std::string text, double v) {
      return json && !std::isfinite(v) ? std::string("null") : text;
    };
    if (complex) {
      value = [&, number](std::size_t i) {
        const double re = decoded[2 * i];
        const double im = decoded[2 * i + 1];
        if (args.json) {
          return fmt::format("[{},{}]", number(fmt::format("{}", static_cast<float>(re)), re),
                             number(fmt::format("{}", static_cast<float>(im)), im));
        }
        return fmt::format("{}{:+}j", static_cast<float>(re), static_cast<float>(im));
      };
    } else if (safetensors::dtype_bits(type) < 32) {
      // The precision of the type itself: the shortest text that reads back as the same F16/BF16/F8 value.
      value = [&, number](std::size_t i) { return number(shortest_in_type(type, decoded[i]), decoded[i]); };
    } else if (safetensors::dtype_bits(type) == 32) {
      value = [&, number](std::size_t i) {
        return number(fmt::format("{}", static_cast<float>(decoded[i])), decoded[i]);
      };
    } else {
      value = [&, number](std::size_t i) { return number(fmt::format("{}", decoded[i]), decoded[i]); };
    }
  } else {
    value = [&](std::size_t i) { return integer_text(type, bytes, i, args.json); };
  }
  if (args.json) {
    nested_printer printer(plan->shape, args.limit, value, true);
    const std::string values = printer.run();
    fmt::print(R"({{"tensor":{},"dtype":"{}","shape":[{}],"slice":{},"slice_shape":[{}],"truncated":{},"values":{}}})"
               "\n",
               safetensors::json_quote(args.tensor), safetensors::dtype_name(type), fmt::join(where->info->shape, ","),
               args.slice.empty() ? "null" : safetensors::json_quote(args.slice), fmt::join(plan->shape, ","),
               printer.truncated(), values);
    return exit_ok;
  }
  fmt::print("{}: {} [{}]", args.tensor, safetensors::dtype_name(type), fmt::join(where->info->shape, ", "));
  if (!args.slice.empty()) fmt::print(" [{}] -> [{}]", args.slice, fmt::join(plan->shape, ", "));
  fmt::print("\n{}\n", nested_printer(plan->shape, args.limit, value).run());
  return exit_ok;
}

const command_registrar registrar{
    "dump", "Print a tensor's values, or a numpy-style slice of them", [](CLI::App& app) -> runner {
      auto args = std::make_shared<dump_args>();
      app.add_option("file", args->path, "SafeTensors file, checkpoint directory or index")->required();
      app.add_option("tensor", args->tensor, "Tensor name")->required();
      app.add_option("--slice", args->slice, "numpy indexing per dimension, e.g. \"0:8, ::2, -1, ...\"");
      app.add_option("--limit", args->limit, "Print at most N values, then '...' (0: all)")->capture_default_str();
      app.add_flag("--json", args->json,
                   "One JSON object: dtype, shape, slice, values as nested arrays (non-finite: null), truncated");
      return [args] { return run_dump(*args); };
    }};

}  // namespace
}  // namespace st_cli
