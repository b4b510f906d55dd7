// SPDX-License-Identifier: Apache-2.0
// `safetensors dump FILE TENSOR [--slice "0:8, ::2"] [--limit N] [--json]`: prints a
// tensor's values (or a numpy-style slice of them) as nested lists, like numpy.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "checkpoint_tensors.h"
#include "command.h"
#include "input.h"
#include "nested_lists.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/convert.h"
#include "safetensors/json_text.h"
#include "safetensors/pipeline/chunk_cast.h"
#include "safetensors/slice.h"

namespace st_cli {

using safetensors::pipeline::decode_values;
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

/// Text to stdout through a buffer, so memory stays bounded however much is printed. After
/// a failed write (the reader went away: EPIPE when SIGPIPE is ignored) the rest is dropped
/// and the printer stops.
class text_sink {
 public:
  text_sink() { buffer_.reserve(capacity); }
  text_sink(const text_sink&) = delete;
  text_sink& operator=(const text_sink&) = delete;
  ~text_sink() { flush(); }

  void append(std::string_view text) {
    if (failed_) return;
    buffer_.append(text);
    if (buffer_.size() >= capacity) flush();
  }
  void flush() {
    if (failed_) return;
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size()) failed_ = true;
    if (std::fflush(stdout) != 0) failed_ = true;
    buffer_.clear();
  }
  [[nodiscard]] bool failed() const { return failed_; }

 private:
  static constexpr std::size_t capacity = std::size_t{1} << 16;
  std::string buffer_;
  bool failed_ = false;
};

/// The slice's elements in order, read and decoded a window at a time (at most
/// chunk_elements): only the part being printed is in memory.
class value_stream {
 public:
  value_stream(const safetensors::file& f, const safetensors::slice_plan& plan, std::uint64_t wanted, bool json)
      : file_(f), plan_(plan), json_(json) {
    const safetensors::dtype t = plan.type;
    // Whole groups of 8 elements, so sub-byte windows are whole bytes; no more than printed.
    const std::uint64_t elements = std::min<std::uint64_t>(chunk_elements, (wanted + 8) / 8 * 8);
    window_bytes_ = static_cast<std::size_t>(elements * safetensors::dtype_bits(t) / 8);
    bits_ = safetensors::dtype_bits(t);
  }

  /// Element `i` as text; `i` only grows. Empty after a read error (see error()).
  std::string at(std::size_t i) {
    while (i >= end_ && !error_) next_window();
    if (error_ || i < start_) return {};
    return format(i - start_);
  }
  [[nodiscard]] const std::optional<safetensors::error>& error() const { return error_; }

 private:
  std::string format(std::size_t i) const {
    using safetensors::dtype;
    const dtype type = plan_.type;
    if (!safetensors::dtype_is_float(type)) return integer_text(type, bytes_, i, json_);
    // JSON has no NaN or infinity: null, as everywhere in our JSON.
    const auto number = [this](std::string text, double v) {
      return json_ && !std::isfinite(v) ? std::string("null") : text;
    };
    if (type == dtype::C64) {
      const double re = decoded_[2 * i];
      const double im = decoded_[2 * i + 1];
      if (json_) {
        return fmt::format("[{},{}]", number(fmt::format("{}", static_cast<float>(re)), re),
                           number(fmt::format("{}", static_cast<float>(im)), im));
      }
      return fmt::format("{}{:+}j", static_cast<float>(re), static_cast<float>(im));
    }
    const double v = decoded_[i];
    // The precision of the type itself: the shortest text that reads back as the same F16/BF16/F8 value.
    if (bits_ < 32) return number(shortest_in_type(type, v), v);
    if (bits_ == 32) return number(fmt::format("{}", static_cast<float>(v)), v);
    return number(fmt::format("{}", v), v);
  }

  /// Reads the next window of the slice's ranges (read_slice on the part of the plan it covers).
  void next_window() {
    safetensors::slice_plan part;
    part.type = plan_.type;
    while (part.byte_size < window_bytes_ && range_ < plan_.ranges.size()) {
      const safetensors::byte_range& r = plan_.ranges[range_];
      const std::uint64_t n = std::min<std::uint64_t>(r.length - in_range_, window_bytes_ - part.byte_size);
      part.ranges.push_back({r.offset + in_range_, n});
      part.byte_size += n;
      in_range_ += n;
      if (in_range_ == r.length) {
        ++range_;
        in_range_ = 0;
      }
    }
    if (part.byte_size == 0) {
      error_ = safetensors::make_error(safetensors::error_code::invalid_argument, "read past the end of the slice");
      return;
    }
    bytes_.resize(static_cast<std::size_t>(part.byte_size));
    if (auto s = safetensors::read_slice(file_, part, bytes_); !s) {
      error_ = std::move(s).err();
      return;
    }
    if (safetensors::dtype_is_float(plan_.type)) {
      if (auto s = decode_values(plan_.type, bytes_, decoded_); !s) {
        error_ = std::move(s).err();
        return;
      }
    }
    start_ = end_;
    end_ += static_cast<std::size_t>(part.byte_size * 8 / bits_);
  }

  const safetensors::file& file_;
  const safetensors::slice_plan& plan_;
  bool json_;
  std::size_t window_bytes_ = 0;
  std::size_t bits_ = 8;
  std::size_t range_ = 0;
  std::uint64_t in_range_ = 0;
  std::vector<std::byte> bytes_;
  std::vector<double> decoded_;
  std::size_t start_ = 0;  // elements [start_, end_) are in the window
  std::size_t end_ = 0;
  std::optional<safetensors::error> error_;
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

  const safetensors::dtype type = where->info->type;
  std::uint64_t count = 1;
  for (auto d : plan->shape) count *= d;
  const nested_lists lists(plan->shape, args.limit, args.json);
  const bool truncated = args.limit != 0 && lists.cuts();
  value_stream values(f, *plan, args.limit == 0 ? count : std::min(count, args.limit), args.json);
  text_sink out;
  if (args.json) {
    out.append(fmt::format(
        R"({{"tensor":{},"dtype":"{}","shape":[{}],"slice":{},"slice_shape":[{}],"truncated":{},)"
        R"("values":)",
        safetensors::json_quote(args.tensor), safetensors::dtype_name(type), fmt::join(where->info->shape, ","),
        args.slice.empty() ? "null" : safetensors::json_quote(args.slice), fmt::join(plan->shape, ","), truncated));
  } else {
    out.append(fmt::format("{}: {} [{}]", printable_text(args.tensor), safetensors::dtype_name(type),
                           fmt::join(where->info->shape, ", ")));
    if (!args.slice.empty()) {
      out.append(fmt::format(" [{}] -> [{}]", printable_text(args.slice), fmt::join(plan->shape, ", ")));
    }
    out.append("\n");
  }
  std::size_t index = 0;
  lists.print({.value = [&] { return values.at(index++); },
               .out = [&out](std::string_view text) { out.append(text); },
               .stop = [&] { return out.failed() || values.error().has_value(); }});
  if (values.error()) return *values.error();
  out.append(args.json ? "}\n" : "\n");
  out.flush();
  // A reader that went away (`| head`) wanted no more: stop quietly, as the printer did.
  return exit_ok;
}

const command_registrar dump_registrar{
    "dump", "Print a tensor's values, or a numpy-style slice of them", [](CLI::App& app) -> runner {
      auto args = std::make_shared<dump_args>();
      app.add_option("file", args->path, "SafeTensors file, checkpoint directory or index")->required();
      app.add_option("tensor", args->tensor, "Tensor name")->required();
      app.add_option("--slice", args->slice, "numpy indexing per dimension, e.g. \"0:8, ::2, -1, ...\"");
      app.add_option("--limit", args->limit, "Print at most N values, then '...' (0: all)")
          ->check(whole_number)
          ->capture_default_str();
      add_json(app, args->json,
               "One JSON object: dtype, shape, slice, values as nested arrays (non-finite: null), truncated");
      return [args] { return run_dump(*args); };
    }};

}  // namespace
}  // namespace st_cli
