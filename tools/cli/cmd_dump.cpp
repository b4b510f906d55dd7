// SPDX-License-Identifier: Apache-2.0
// `safetensors dump FILE TENSOR [--slice "0:8, ::2"] [--limit N]`: prints a tensor's
// values (or a numpy-style slice of them) as nested lists, like numpy.
#include <cstring>

#include <fmt/format.h>

#include "command.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/convert.h"
#include "safetensors/slice.h"

namespace st_cli {
namespace {

struct dump_args {
  std::string path;
  std::string tensor;
  std::string slice;
  std::uint64_t limit = 1000;
};

template <class T>
std::string integer_at(std::span<const std::byte> bytes, std::size_t i) {
  T v{};
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return fmt::format("{}", v);
}

/// Element `i` as text. Integers are read exactly (64-bit values exceed a double's 53 bits).
std::string integer_text(safetensors::dtype t, std::span<const std::byte> bytes, std::size_t i) {
  using safetensors::dtype;
  switch (t) {
    case dtype::BOOL: return bytes[i] != std::byte{0} ? "True" : "False";
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

/// Nested brackets, last dimension on one line, at most `limit` values (0: all).
class nested_printer {
 public:
  nested_printer(std::span<const std::uint64_t> shape, std::uint64_t limit,
                 std::function<std::string(std::size_t)> value)
      : shape_(shape), limit_(limit), value_(std::move(value)) {}

  std::string run() {
    emit(0);
    return out_;
  }

 private:
  void emit(std::size_t dim) {
    if (dim == shape_.size()) {
      out_ += value_(index_++);
      return;
    }
    out_ += "[";
    for (std::uint64_t i = 0; i < shape_[dim]; ++i) {
      if (i > 0) out_ += dim + 1 == shape_.size() ? ", " : ",\n" + std::string(dim + 1, ' ');
      if (limit_ != 0 && index_ == limit_) {
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
  std::size_t index_ = 0;
  bool truncated_ = false;
  std::string out_;
};

int fail(const safetensors::error& e) {
  print_error(e);
  return exit_code_for(e);
}

int run_dump(const dump_args& args) {
  safetensors::checkpoint_options options;
  options.shard.backend = safetensors::io_backend::pread;
  auto c = safetensors::checkpoint::open(args.path, options);
  if (!c) return fail(c.err());
  const safetensors::tensor_location* where = c->find(args.tensor);
  if (where == nullptr) {
    auto e = safetensors::make_error(safetensors::error_code::tensor_not_found,
                                     fmt::format("tensor '{}' not found", args.tensor), std::nullopt, args.tensor);
    e.path = args.path;
    return fail(e);
  }
  const safetensors::file& f = c->file_of(*where);
  auto spec = safetensors::parse_slice_spec(args.slice);
  if (!spec) return fail(spec.err());
  auto plan = safetensors::plan_slice(f, args.tensor, *spec);
  if (!plan) return fail(plan.err());
  std::vector<std::byte> bytes(plan->byte_size);
  if (auto s = safetensors::read_slice(f, *plan, bytes); !s) return fail(s.err());

  const safetensors::dtype type = where->info->type;
  std::uint64_t count = 1;
  for (auto d : plan->shape) count *= d;
  std::function<std::string(std::size_t)> value;
  std::vector<double> decoded;
  if (safetensors::dtype_is_float(type)) {
    const bool complex = type == safetensors::dtype::C64;
    decoded.resize(complex ? count * 2 : count);
    if (auto s = safetensors::decode_to_f64(complex ? safetensors::dtype::F32 : type, bytes, decoded); !s) {
      return fail(s.err());
    }
    if (complex) {
      value = [&](std::size_t i) {
        return fmt::format("{}{:+}j", static_cast<float>(decoded[2 * i]), static_cast<float>(decoded[2 * i + 1]));
      };
    } else {
      // Types of 32 bits or less print as float: the shortest text that reads back exactly.
      if (safetensors::dtype_bits(type) <= 32) {
        value = [&](std::size_t i) { return fmt::format("{}", static_cast<float>(decoded[i])); };
      } else {
        value = [&](std::size_t i) { return fmt::format("{}", decoded[i]); };
      }
    }
  } else {
    value = [&](std::size_t i) { return integer_text(type, bytes, i); };
  }
  fmt::print("{}: {} [{}]", args.tensor, safetensors::dtype_name(type), fmt::join(where->info->shape, ", "));
  if (!args.slice.empty()) fmt::print(" [{}] -> [{}]", args.slice, fmt::join(plan->shape, ", "));
  fmt::print("\n{}\n", nested_printer(plan->shape, args.limit, value).run());
  return exit_ok;
}

const command_registrar registrar{
    "dump", "Print a tensor's values, or a numpy-style slice of them",
    [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<dump_args>();
      app.add_option("file", args->path, "SafeTensors file, checkpoint directory or index")->required();
      app.add_option("tensor", args->tensor, "Tensor name")->required();
      app.add_option("--slice", args->slice, "numpy indexing per dimension, e.g. \"0:8, ::2, -1, ...\"");
      app.add_option("--limit", args->limit, "Print at most N values, then '...' (0: all)")->capture_default_str();
      return [args] { return run_dump(*args); };
    }};

}  // namespace
}  // namespace st_cli
