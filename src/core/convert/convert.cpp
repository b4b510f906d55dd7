// SPDX-License-Identifier: Apache-2.0
// The public conversion entry points: check sizes, pick the kernel for the dtype once
// per call, and turn a kernel's refusal into an error naming the element.
#include "safetensors/convert.h"

#include <fmt/format.h>

#include "convert/kernels.h"

namespace safetensors {
namespace {

namespace cd = detail;

status check_sizes(dtype t, std::size_t bytes, std::size_t count, const char* direction) {
  const byte_size_result need = byte_size(t, count);
  if (need.problem == size_problem::not_whole_bytes) {
    return make_error(
        error_code::invalid_argument,
        fmt::format("cannot {} {} elements of {}: they do not fill whole bytes", direction, count, dtype_name(t)));
  }
  if (need.problem != size_problem::none || need.bytes != bytes) {
    return make_error(error_code::invalid_argument,
                      fmt::format("cannot {} {} elements of {}: buffer has {} bytes, expected {}", direction, count,
                                  dtype_name(t), bytes, need.bytes));
  }
  return {};
}

status reject_complex(dtype t, const char* direction) {
  return make_error(error_code::invalid_argument,
                    fmt::format("cannot {} {} as real numbers: it is complex (read its bytes as F32 pairs)", direction,
                                dtype_name(t)));
}

template <class Out>
status decode(dtype from, std::span<const std::byte> src, std::span<Out> dst) {
  if (from == dtype::C64) return reject_complex(from, "decode");
  if (auto ok = check_sizes(from, src.size(), dst.size(), "decode"); !ok) return ok;
  const std::byte* s = src.data();
  Out* d = dst.data();
  const std::size_t n = dst.size();
  if (from == dtype::BF16) {
    if constexpr (std::is_same_v<Out, float>)
      cd::bf16_to_f32(s, d, n);
    else
      cd::bf16_to_f64(s, d, n);
  } else if (from == dtype::F16) {
    if constexpr (std::is_same_v<Out, float>)
      cd::f16_to_f32(s, d, n);
    else
      cd::f16_to_f64(s, d, n);
  } else if (dtype_bits(from) <= 8) {
    cd::lut_decode(from, s, d, n);
  } else {
    cd::plain_decode(from, s, d, n);
  }
  return {};
}

}  // namespace

status decode_to_f32(dtype from, std::span<const std::byte> src, std::span<float> dst) {
  return decode(from, src, dst);
}

status decode_to_f64(dtype from, std::span<const std::byte> src, std::span<double> dst) {
  return decode(from, src, dst);
}

status encode_from_f32(dtype to, std::span<const float> src, std::span<std::byte> dst, const encode_options& options) {
  if (to == dtype::C64) return reject_complex(to, "encode");
  if (auto ok = check_sizes(to, dst.size(), src.size(), "encode"); !ok) return ok;
  const float* s = src.data();
  std::byte* d = dst.data();
  const std::size_t n = src.size();
  std::size_t bad = cd::no_error;
  if (to == dtype::BF16) {
    cd::f32_to_bf16(s, d, n);
  } else if (to == dtype::F16) {
    cd::f32_to_f16(s, d, n);
  } else if (dtype_is_float(to) && dtype_bits(to) <= 8) {
    bad = cd::minifloat_encode(to, s, d, n, options.saturate);
  } else {
    bad = cd::plain_encode(to, s, d, n, options.check_range);
  }
  if (bad != cd::no_error) {
    const char* why = dtype_is_float(to) ? "it has no NaN" : "out of range";
    return make_error(error_code::invalid_argument,
                      fmt::format("cannot encode element {} (value {}) as {}: {}", bad, s[bad], dtype_name(to), why));
  }
  return {};
}

}  // namespace safetensors
