// SPDX-License-Identifier: Apache-2.0
// MLX quantized layers from Python: describe a file's layers, dequantize one into a caller's
// buffer, quantize a buffer. The kernels run with the GIL released.
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "buffers.h"
#include "errors.h"
#include "safetensors/file.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/mlx_quant.h"

namespace py = pybind11;
namespace st = safetensors;
namespace mlx = safetensors::mlx;

namespace st_python {
namespace {

struct described {
  st::file file;
  mlx::checkpoint_info info;
};

described describe(const std::string& path) {
  auto f = unwrap(st::file::open(path));
  auto config = unwrap(mlx::read_config_beside(path));
  auto info = unwrap(mlx::describe_checkpoint(f.header(), config ? &*config : nullptr));
  return {std::move(f), std::move(info)};
}

py::dict layer_dict(const mlx::quantized_layer& l) {
  py::dict d;
  d["path"] = l.path;
  d["weight"] = l.weight;
  d["scales"] = l.scales;
  d["biases"] = l.biases.empty() ? py::none() : py::cast(l.biases);
  d["mode"] = std::string(mlx::mode_name(l.params.mode));
  d["bits"] = l.params.bits;
  d["group_size"] = l.params.group_size;
  d["scale_dtype"] = std::string(st::dtype_name(l.scale_type));
  d["shape"] = l.shape;
  d["source"] = std::string(mlx::source_name(l.source));
  d["ambiguous"] = l.ambiguous;
  return d;
}

py::dict layers(const std::string& path) {
  const auto d = describe(path);
  py::list layers;
  for (const auto& l : d.info.layers) layers.append(layer_dict(l));
  py::dict out;
  out["mlx_format"] = d.info.mlx_format;
  out["layers"] = layers;
  out["warnings"] = d.info.warnings;
  return out;
}

void dequantize_into(const std::string& path, const std::string& weight, const std::string& out_code,
                     const py::handle& out) {
  const auto d = describe(path);
  const auto* layer = d.info.find_weight(weight);
  if (layer == nullptr) {
    throw python_error(st::make_error(st::error_code::tensor_not_found,
                                      "'" + weight + "' is not the weight of a quantized layer", std::nullopt, weight));
  }
  const auto ref = unwrap(mlx::layer_ref(d.file, *layer));
  contiguous_buffer destination(out, true);
  st::status status;
  {
    py::gil_scoped_release release;
    status = mlx::dequantize(ref, dtype_from_code(out_code), destination.bytes());
  }
  check(std::move(status));
}

mlx::quant_params params_from(const std::string& mode, unsigned bits, unsigned group_size) {
  const auto m = mlx::parse_mode(mode);
  if (!m) fail_argument("mode " + mode + " is invalid (valid: affine, mxfp4, mxfp8, nvfp4)");
  auto p = mlx::default_params(*m);
  if (bits != 0) p.bits = bits;
  if (group_size != 0) p.group_size = group_size;
  return p;
}

void quantize_into(const std::string& in_code, const py::handle& in, std::uint64_t rows, std::uint64_t cols,
                   const std::string& mode, unsigned bits, unsigned group_size, const py::handle& weight,
                   const py::handle& scales, const py::handle& biases) {
  const auto params = params_from(mode, bits, group_size);
  const auto in_type = dtype_from_code(in_code);
  contiguous_buffer source(in, false);
  contiguous_buffer w(weight, true);
  contiguous_buffer s(scales, true);
  std::optional<contiguous_buffer> b;
  if (!biases.is_none()) b.emplace(biases, true);
  const mlx::quantized_out out{w.bytes(), s.bytes(), b ? b->bytes() : std::span<std::byte>{}};
  st::status status;
  {
    py::gil_scoped_release release;
    status = mlx::quantize(in_type, source.bytes(), rows, cols, params, out);
  }
  check(std::move(status));
}

}  // namespace

void bind_mlx(py::module_& m) {
  m.def("mlx_layers", &layers, py::arg("path"),
        "The quantized MLX layers of a file (config.json beside it is read when present).");
  m.def("mlx_dequantize_into", &dequantize_into, py::arg("path"), py::arg("weight"), py::arg("dtype"), py::arg("out"),
        "Dequantizes the layer whose packed weight is `weight` into `out`.");
  m.def("mlx_quantize_into", &quantize_into, py::arg("dtype"), py::arg("data"), py::arg("rows"), py::arg("cols"),
        py::arg("mode"), py::arg("bits"), py::arg("group_size"), py::arg("weight"), py::arg("scales"),
        py::arg("biases"), "Quantizes rows x cols elements into the given buffers (bits/group_size 0: defaults).");
  m.def(
      "mlx_params",
      [](const std::string& mode, unsigned bits, unsigned group_size) {
        const auto p = params_from(mode, bits, group_size);
        check(mlx::check_quantize_params(p));
        return py::make_tuple(p.bits, p.group_size);
      },
      py::arg("mode"), py::arg("bits") = 0, py::arg("group_size") = 0,
      "(bits, group size) after defaults, checked as quantize checks them.");
  m.def(
      "mlx_scale_dtype",
      [](const std::string& mode, const std::string& in_code) {
        return std::string(
            st::dtype_name(mlx::scale_dtype_for(params_from(mode, 0, 0).mode, dtype_from_code(in_code))));
      },
      py::arg("mode"), py::arg("dtype"));
}

}  // namespace st_python
