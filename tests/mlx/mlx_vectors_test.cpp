// SPDX-License-Identifier: Apache-2.0
// Every case of ../shared/conformance/mlx/vectors.json (arrays produced by MLX's CPU
// backend), bit for bit, in both directions: dequantize MLX's codes, and quantize MLX's
// inputs back into the same codes, scales and biases.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "safetensors/mlx_quant.h"
#include "support/paths.h"

namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

struct vec_case {
  dtype type = dtype::U8;
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> bytes;  // little-endian, as in a file
  std::size_t rows = 0;
};

class vectors {
 public:
  static const vectors& get() {
    static const vectors v;
    return v;
  }
  const vec_case* find(const std::string& name) const {
    auto it = cases_.find(name);
    return it == cases_.end() ? nullptr : &it->second;
  }
  std::size_t size() const { return cases_.size(); }
  const std::map<std::string, vec_case>& all() const { return cases_; }

 private:
  vectors() {
    simdjson::dom::parser parser;
    const auto path = st_test::conformance_dir() / "mlx" / "vectors.json";
    simdjson::dom::element doc;
    if (parser.load(path.string()).get(doc) != simdjson::SUCCESS) {
      ADD_FAILURE() << "cannot read " << path;
      return;
    }
    simdjson::dom::object all;
    if (doc["cases"].get(all) != simdjson::SUCCESS) {
      ADD_FAILURE() << "no cases in " << path;
      return;
    }
    for (simdjson::dom::key_value_pair kv : all) {
      simdjson::dom::object value;
      std::string_view type_name;
      simdjson::dom::array rows;
      if (kv.value.get(value) != simdjson::SUCCESS || value["dtype"].get(type_name) != simdjson::SUCCESS ||
          value["hex"].get(rows) != simdjson::SUCCESS || !safetensors::parse_dtype(type_name)) {
        ADD_FAILURE() << "malformed case " << kv.key;
        continue;
      }
      vec_case c;
      c.type = *safetensors::parse_dtype(type_name);
      simdjson::dom::array shape;
      if (value["shape"].get(shape) == simdjson::SUCCESS) {
        for (simdjson::dom::element d : shape) {
          std::uint64_t n = 0;
          if (d.get(n) == simdjson::SUCCESS) c.shape.push_back(n);
        }
      }
      const unsigned width = safetensors::dtype_bits(c.type) / 8;
      auto append = [&](std::string_view hex) {
        const std::uint64_t v = std::stoull(std::string(hex), nullptr, 16);
        for (unsigned i = 0; i < width; ++i) c.bytes.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
      };
      for (simdjson::dom::element row : rows) {
        std::string_view text;
        simdjson::dom::array items;
        if (row.get(text) == simdjson::SUCCESS) {
          append(text);
        } else if (row.get(items) == simdjson::SUCCESS) {
          ++c.rows;
          for (simdjson::dom::element item : items) {
            if (item.get(text) == simdjson::SUCCESS) append(text);
          }
        }
      }
      cases_.emplace(std::string(kv.key), std::move(c));
    }
  }
  std::map<std::string, vec_case> cases_;
};

dtype dtype_of(const std::string& dt) { return dt == "f32" ? dtype::F32 : dt == "f16" ? dtype::F16 : dtype::BF16; }

constexpr const char* float_dts[] = {"f32", "f16", "bf16"};

/// First differing element, as "element i: got X, want Y" (hex of the bytes), or "".
std::string first_difference(const std::vector<std::byte>& got, const std::vector<std::byte>& want, unsigned width) {
  if (got.size() != want.size()) return fmt::format("size {} vs {}", got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); i += width) {
    if (std::memcmp(&got[i], &want[i], width) != 0) {
      std::uint64_t g = 0;
      std::uint64_t w = 0;
      for (unsigned b = 0; b < width; ++b) {
        g |= std::to_integer<std::uint64_t>(got[i + b]) << (8 * b);
        w |= std::to_integer<std::uint64_t>(want[i + b]) << (8 * b);
      }
      return fmt::format("element {}: got {:0{}x}, want {:0{}x}", i / width, g, 2 * width, w, 2 * width);
    }
  }
  return "";
}

#define EXPECT_SAME_BYTES(got, want, width) EXPECT_EQ(first_difference((got), (want), (width)), "")

TEST(MlxVectors, CorpusHasEveryCase) {
  const auto& v = vectors::get();
  EXPECT_EQ(v.size(), 324U);
  for (const char* dt : float_dts) {
    for (unsigned g : {32U, 64U, 128U}) {
      for (unsigned bits : {2U, 3U, 4U, 5U, 6U, 8U}) {
        for (const char* part : {"w", "s", "b", "deq", "deq32"}) {
          EXPECT_NE(v.find(fmt::format("aff_{}_g{}_b{}_{}", dt, g, bits, part)), nullptr);
        }
      }
    }
  }
}

TEST(MlxVectors, AffineDequantizeIsBitExact) {
  const auto& v = vectors::get();
  int checked = 0;
  for (const char* dt : float_dts) {
    for (unsigned g : {32U, 64U, 128U}) {
      for (unsigned bits : {2U, 3U, 4U, 5U, 6U, 8U}) {
        const std::string p = fmt::format("aff_{}_g{}_b{}_", dt, g, bits);
        SCOPED_TRACE(p);
        const vec_case* w = v.find(p + "w");
        const vec_case* s = v.find(p + "s");
        const vec_case* b = v.find(p + "b");
        const vec_case* deq = v.find(p + "deq");
        const vec_case* deq32 = v.find(p + "deq32");
        ASSERT_TRUE(w && s && b && deq && deq32);
        mlx::quantized_ref q;
        q.params = {mlx::quant_mode::affine, bits, g};
        q.rows = w->shape[0];
        q.cols = deq->shape[1];
        q.weight = w->bytes;
        q.scale_type = s->type;
        q.scales = s->bytes;
        q.biases = b->bytes;
        EXPECT_EQ(mlx::default_output_dtype(q), deq->type);
        std::vector<std::byte> out(deq->bytes.size());
        ASSERT_TRUE(mlx::dequantize(q, deq->type, out));
        EXPECT_SAME_BYTES(out, deq->bytes, safetensors::dtype_bits(deq->type) / 8);
        std::vector<std::byte> out32(deq32->bytes.size());
        ASSERT_TRUE(mlx::dequantize(q, dtype::F32, out32));
        EXPECT_SAME_BYTES(out32, deq32->bytes, 4);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 54);
}

TEST(MlxVectors, AffineQuantizeIsBitExact) {
  const auto& v = vectors::get();
  for (const char* dt : float_dts) {
    const vec_case* in = v.find(fmt::format("in_{}", dt));
    ASSERT_NE(in, nullptr);
    const std::uint64_t rows = in->rows;
    const std::uint64_t cols = 128;
    for (unsigned g : {32U, 64U, 128U}) {
      for (unsigned bits : {2U, 3U, 4U, 5U, 6U, 8U}) {
        const std::string p = fmt::format("aff_{}_g{}_b{}_", dt, g, bits);
        SCOPED_TRACE(p);
        const vec_case* w = v.find(p + "w");
        const vec_case* s = v.find(p + "s");
        const vec_case* b = v.find(p + "b");
        ASSERT_TRUE(w && s && b);
        std::vector<std::byte> ow(w->bytes.size()), os(s->bytes.size()), ob(b->bytes.size());
        ASSERT_TRUE(
            mlx::quantize(dtype_of(dt), in->bytes, rows, cols, {mlx::quant_mode::affine, bits, g}, {ow, os, ob}));
        EXPECT_SAME_BYTES(ow, w->bytes, 4);
        EXPECT_SAME_BYTES(os, s->bytes, safetensors::dtype_bits(s->type) / 8);
        EXPECT_SAME_BYTES(ob, b->bytes, safetensors::dtype_bits(b->type) / 8);
      }
    }
  }
}

TEST(MlxVectors, FpModesDequantizeIsBitExact) {
  const auto& v = vectors::get();
  for (const char* dt : float_dts) {
    for (auto mode : {mlx::quant_mode::mxfp4, mlx::quant_mode::mxfp8, mlx::quant_mode::nvfp4}) {
      const std::string p = fmt::format("{}_{}_", mlx::mode_name(mode), dt);
      SCOPED_TRACE(p);
      const vec_case* w = v.find(p + "w");
      const vec_case* s = v.find(p + "s");
      const vec_case* deq = v.find(p + "deq");
      const vec_case* deq32 = v.find(p + "deq32");
      ASSERT_TRUE(w && s && deq && deq32);
      mlx::quantized_ref q;
      q.params = mlx::default_params(mode);
      q.rows = w->shape[0];
      q.cols = deq->shape[1];
      q.weight = w->bytes;
      q.scale_type = dtype::U8;
      q.scales = s->bytes;
      std::vector<std::byte> out(deq->bytes.size());
      ASSERT_TRUE(mlx::dequantize(q, deq->type, out));
      EXPECT_SAME_BYTES(out, deq->bytes, safetensors::dtype_bits(deq->type) / 8);
      std::vector<std::byte> out32(deq32->bytes.size());
      ASSERT_TRUE(mlx::dequantize(q, dtype::F32, out32));
      EXPECT_SAME_BYTES(out32, deq32->bytes, 4);
    }
  }
}

TEST(MlxVectors, Nvfp4WithGlobalScaleDequantizeIsBitExact) {
  const auto& v = vectors::get();
  for (const char* dt : float_dts) {
    const std::string p = fmt::format("nvfp4gs_{}_", dt);
    SCOPED_TRACE(p);
    const vec_case* w = v.find(p + "w");
    const vec_case* s = v.find(p + "s");
    const vec_case* gs = v.find(p + "gscale");
    const vec_case* deq = v.find(p + "deqT");
    const vec_case* deq32 = v.find(p + "deq32");
    ASSERT_TRUE(w && s && gs && deq && deq32);
    mlx::quantized_ref q;
    q.params = mlx::default_params(mlx::quant_mode::nvfp4);
    q.rows = w->shape[0];
    q.cols = deq->shape[1];
    q.weight = w->bytes;
    q.scale_type = dtype::U8;
    q.scales = s->bytes;
    float g = 0;
    std::memcpy(&g, gs->bytes.data(), 4);
    q.global_scale = g;
    for (const vec_case* want : {deq, deq32}) {
      std::vector<std::byte> out(want->bytes.size());
      ASSERT_TRUE(mlx::dequantize(q, dtype::F32, out));
      EXPECT_SAME_BYTES(out, want->bytes, 4);
    }
  }
}

TEST(MlxVectors, FpModesQuantizeIsBitExact) {
  const auto& v = vectors::get();
  for (const char* dt : float_dts) {
    const vec_case* in = v.find(fmt::format("in_{}", dt));
    ASSERT_NE(in, nullptr);
    for (auto mode : {mlx::quant_mode::mxfp4, mlx::quant_mode::mxfp8, mlx::quant_mode::nvfp4}) {
      const std::string p = fmt::format("{}_{}_", mlx::mode_name(mode), dt);
      SCOPED_TRACE(p);
      const vec_case* w = v.find(p + "w");
      const vec_case* s = v.find(p + "s");
      ASSERT_TRUE(w && s);
      std::vector<std::byte> ow(w->bytes.size()), os(s->bytes.size());
      ASSERT_TRUE(mlx::quantize(dtype_of(dt), in->bytes, in->rows, 128, mlx::default_params(mode), {ow, os, {}}));
      EXPECT_SAME_BYTES(ow, w->bytes, 4);
      EXPECT_SAME_BYTES(os, s->bytes, 1);
    }
  }
}

TEST(MlxVectors, Nvfp4WithGlobalScaleQuantizeIsBitExact) {
  const auto& v = vectors::get();
  for (const char* dt : float_dts) {
    const vec_case* in = v.find(fmt::format("in_{}", dt));
    const std::string p = fmt::format("nvfp4gs_{}_", dt);
    SCOPED_TRACE(p);
    const vec_case* w = v.find(p + "w");
    const vec_case* s = v.find(p + "s");
    const vec_case* gs = v.find(p + "gscale");
    ASSERT_TRUE(in && w && s && gs);
    float g = 0;
    std::memcpy(&g, gs->bytes.data(), 4);
    std::vector<std::byte> ow(w->bytes.size()), os(s->bytes.size());
    ASSERT_TRUE(mlx::quantize(dtype_of(dt), in->bytes, in->rows, 128, mlx::default_params(mlx::quant_mode::nvfp4),
                              {ow, os, {}}, {}, g));
    EXPECT_SAME_BYTES(ow, w->bytes, 4);
    EXPECT_SAME_BYTES(os, s->bytes, 1);
  }
}

TEST(MlxVectors, NotesAnchorsHold) {
  const auto& v = vectors::get();
  const vec_case* s = v.find("aff_f32_g32_b4_s");
  ASSERT_NE(s, nullptr);
  std::uint32_t first = 0;
  std::memcpy(&first, s->bytes.data(), 4);
  EXPECT_EQ(first, 0x3e800000U);  // §11: row 0 scale
}

}  // namespace
