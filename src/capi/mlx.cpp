// SPDX-License-Identifier: Apache-2.0
// MLX quantized layers through the C API: describe a file's layers (safetensors/mlx_checkpoint.h)
// and dequantize rows of one from bytes the caller read, so a header-only handle (a browser's
// File.slice) can show a quantized weight's values without loading the whole file.
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "capi/boundary.h"
#include "capi/handles.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/mlx_quant.h"

namespace st = safetensors;
using namespace safetensors::capi;

struct safetensors_mlx {
  st::mlx::checkpoint_info info;
  std::vector<safetensors_mlx_layer> layers;  // `path` points into info's strings
};

namespace {

std::size_t index_of(const st::header& h, const std::string& name) {
  if (name.empty()) return SIZE_MAX;
  const st::tensor_info* t = h.find(name);
  return t == nullptr ? SIZE_MAX : static_cast<std::size_t>(t - h.tensors().data());
}

std::span<const std::byte> bytes_of(const void* p, std::size_t size) {
  return {static_cast<const std::byte*>(p), size};
}

}  // namespace

extern "C" {

int safetensors_mlx_describe(const safetensors_file* file, safetensors_mlx** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    SAFETENSORS_C_REQUIRE(file);
    auto info = st::mlx::describe_checkpoint(file->header());
    if (!info) return fail(info.err());
    auto handle = std::make_unique<safetensors_mlx>();
    handle->info = std::move(*info);
    for (const st::mlx::quantized_layer& l : handle->info.layers) {
      safetensors_mlx_layer c{};
      c.path = l.path.c_str();
      c.weight = index_of(file->header(), l.weight);
      c.scales = index_of(file->header(), l.scales);
      c.biases = index_of(file->header(), l.biases);
      c.mode = static_cast<int>(l.params.mode);
      c.bits = l.params.bits;
      c.group_size = l.params.group_size;
      c.scale_dtype = static_cast<int>(l.scale_type);
      c.rows = l.rows;
      c.cols = l.cols;
      c.ambiguous = l.ambiguous ? 1 : 0;
      handle->layers.push_back(c);
    }
    *out = handle.release();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

void safetensors_mlx_free(safetensors_mlx* mlx) { delete mlx; }

int safetensors_mlx_layer_count(const safetensors_mlx* mlx, size_t* count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(mlx);
    SAFETENSORS_C_REQUIRE(count);
    *count = mlx->layers.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_mlx_layer_at(const safetensors_mlx* mlx, size_t index, safetensors_mlx_layer* out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(mlx);
    SAFETENSORS_C_REQUIRE(out);
    if (index >= mlx->layers.size()) {
      return fail_argument(fn, fmt::format("layer index {} out of range ({} layers)", index, mlx->layers.size()));
    }
    *out = mlx->layers[index];
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_mlx_dequantize_f32(const safetensors_mlx* mlx, size_t index, uint64_t first_row, uint64_t row_count,
                                   const void* weight, size_t weight_size, const void* scales, size_t scales_size,
                                   const void* biases, size_t biases_size, float* dst, size_t count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(mlx);
    if (index >= mlx->layers.size()) {
      return fail_argument(fn, fmt::format("layer index {} out of range ({} layers)", index, mlx->layers.size()));
    }
    const st::mlx::quantized_layer& l = mlx->info.layers[index];
    if (first_row > l.rows || row_count > l.rows - first_row) {
      return fail_argument(
          fn, fmt::format("rows [{}, {}) are outside the layer's {} rows", first_row, first_row + row_count, l.rows));
    }
    if ((weight == nullptr && weight_size != 0) || (scales == nullptr && scales_size != 0) ||
        (biases == nullptr && biases_size != 0) || (dst == nullptr && count != 0)) {
      return fail_argument(fn, "a buffer is NULL but its size is not 0");
    }
    if (count != row_count * l.cols) {
      return fail_argument(fn, fmt::format("{} rows of {} need {} floats but {} were given", row_count, l.cols,
                                           row_count * l.cols, count));
    }
    st::mlx::quantized_ref q;
    q.params = l.params;
    q.rows = row_count;
    q.cols = l.cols;
    q.scale_type = l.scale_type;
    q.weight = bytes_of(weight, weight_size);
    q.scales = bytes_of(scales, scales_size);
    q.biases = bytes_of(biases, biases_size);
    st::mlx::kernel_options options;
    options.threads = 1;  // the caller's thread (WebAssembly has no other)
    return status_of(st::mlx::dequantize(q, st::dtype::F32, std::as_writable_bytes(std::span(dst, count)), options));
  });
}

}  // extern "C"
