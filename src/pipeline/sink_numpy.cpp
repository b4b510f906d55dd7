// SPDX-License-Identifier: Apache-2.0
// NumPy outputs: an .npz archive of every tensor (member `name.npy`), or an .npy file
// for exactly one tensor. NumPy files hold no `__metadata__` (dropped with a warning) and
// no 8-, 6- or 4-bit floats (refused); BF16 is written as MLX's '<V2'.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "safetensors/formats/npy.h"
#include "safetensors/formats/npz.h"
#include "safetensors/pipeline/tensor_sink.h"

namespace safetensors::pipeline {
namespace {

namespace st = safetensors;

// Every tensor must have a NumPy dtype before anything is written.
st::status check_numpy_dtypes(const tensor_source& source) {
  for (const auto& t : source.tensors()) {
    if (!st::numpy::npy_descr(t.type)) {
      return st::make_error(st::error_code::invalid_argument,
                            fmt::format("{} has no NumPy dtype (NumPy files take BOOL, U8-U64, I8-I64, F16, BF16, "
                                        "F32, F64 and C64; --dtype F32 casts floats)",
                                        st::dtype_name(t.type)),
                            std::nullopt, t.name);
    }
  }
  return {};
}

void warn_about_losses(const tensor_source& source, const warning_handler& print_warning) {
  if (!print_warning) return;
  if (const auto& meta = source.metadata(); meta && !meta->empty()) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : *meta) keys.push_back(k);
    print_warning(fmt::format("NumPy files cannot hold __metadata__: dropped {} entr{} ({})", keys.size(),
                              keys.size() == 1 ? "y" : "ies", fmt::join(keys, ", ")));
  }
  for (const auto& t : source.tensors()) {
    if (t.type == st::dtype::BF16) {
      print_warning("BF16 tensors are written as '<V2' (MLX's convention; NumPy sees 2-byte voids)");
      break;
    }
  }
}

class npz_sink final : public tensor_sink {
 public:
  npz_sink(std::string path, bool compress, warning_handler on_warning)
      : path_(std::move(path)), compress_(compress), on_warning_(std::move(on_warning)) {}

  st::status write(const tensor_source& source) override {
    if (auto s = check_numpy_dtypes(source); !s) return s;
    warn_about_losses(source, on_warning_);
    auto writer = st::numpy::npz_writer::create(path_, {.compress = compress_});
    if (!writer) return std::move(writer).err();
    for (std::size_t i = 0; i < source.tensors().size(); ++i) {
      const auto& t = source.tensors()[i];
      if (auto s = writer->begin_array(t.name, t.type, t.shape); !s) return s;
      if (auto s = source.read(i, [&](std::span<const std::byte> chunk) { return writer->append(chunk); }); !s) {
        return s;
      }
    }
    return writer->commit();
  }

 private:
  std::string path_;
  bool compress_;
  warning_handler on_warning_;
};

class npy_sink final : public tensor_sink {
 public:
  npy_sink(std::string path, warning_handler on_warning) : path_(std::move(path)), on_warning_(std::move(on_warning)) {}

  st::status write(const tensor_source& source) override {
    if (source.tensors().size() != 1) {
      return st::make_error(
          st::error_code::invalid_argument,
          fmt::format("an .npy file holds exactly one array and the input has {} tensors: write an .npz instead",
                      source.tensors().size()));
    }
    if (auto s = check_numpy_dtypes(source); !s) return s;
    warn_about_losses(source, on_warning_);
    const auto& t = source.tensors().front();
    auto writer = st::numpy::npy_writer::create(path_, t.type, t.shape);
    if (!writer) return std::move(writer).err();
    if (auto s = source.read(0, [&](std::span<const std::byte> chunk) { return writer->append(chunk); }); !s) {
      return s;
    }
    return writer->commit();
  }

 private:
  std::string path_;
  warning_handler on_warning_;
};

}  // namespace

sink_ptr make_npz_sink(const std::string& path, bool compress, warning_handler on_warning) {
  return std::make_unique<npz_sink>(path, compress, std::move(on_warning));
}

sink_ptr make_npy_sink(const std::string& path, warning_handler on_warning) {
  return std::make_unique<npy_sink>(path, std::move(on_warning));
}

}  // namespace safetensors::pipeline
