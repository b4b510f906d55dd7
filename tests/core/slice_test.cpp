// SPDX-License-Identifier: Apache-2.0
// Slicing: the spec parser, fixed cases from the reference and numpy, the reference's
// known bugs, tensor-parallel splits, and a property test against a brute-force gather.
#include <gtest/gtest.h>

#include <random>

#include "safetensors/slice.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::byte_range;
using safetensors::dtype;
using safetensors::error_code;
using safetensors::slice_index;

/// An in-memory file with one tensor "t" whose bytes are 0, 1, 2, ... (mod 251).
struct one_tensor {
  std::vector<std::byte> bytes;
  std::optional<safetensors::file> f;

  one_tensor(dtype type, std::vector<std::uint64_t> shape) {
    const auto size = safetensors::byte_size(type, shape).bytes;
    std::vector<std::byte> data(size);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i % 251);
    std::vector<safetensors::tensor_data> tensors{{"t", type, std::move(shape), data}};
    bytes = safetensors::serialize(tensors).value();
    f.emplace(safetensors::file::from_buffer(bytes).value());
  }
  [[nodiscard]] std::uint64_t base() const { return f->header().data_start(); }
  [[nodiscard]] const safetensors::tensor_info& info() const { return *f->find("t"); }
  auto plan(std::string_view spec) const {
    return safetensors::plan_slice(*f, "t", safetensors::parse_slice_spec(spec).value());
  }
  /// Ranges relative to the tensor's first byte.
  std::vector<byte_range> relative(std::string_view spec) const {
    auto p = plan(spec);
    EXPECT_OK(p) << (p ? "" : p.err().to_string());
    std::vector<byte_range> out;
    if (p) {
      for (auto r : p->ranges) out.push_back({r.offset - base(), r.length});
    }
    return out;
  }
};

TEST(SliceSpec, ParsesEveryForm) {
  auto s = safetensors::parse_slice_spec("0:8, ::2, -1, ...");
  ASSERT_OK(s);
  ASSERT_EQ(s->size(), 4U);
  EXPECT_EQ((*s)[0].type, slice_index::kind::range);
  EXPECT_EQ((*s)[0].start, 0);
  EXPECT_EQ((*s)[0].stop, 8);
  EXPECT_EQ((*s)[1].start, std::nullopt);
  EXPECT_EQ((*s)[1].stop, std::nullopt);
  EXPECT_EQ((*s)[1].step, 2);
  EXPECT_EQ((*s)[2].type, slice_index::kind::index);
  EXPECT_EQ((*s)[2].index, -1);
  EXPECT_EQ((*s)[3].type, slice_index::kind::ellipsis);
  EXPECT_EQ(safetensors::parse_slice_spec("[ 3 , ]")->size(), 1U);
  EXPECT_TRUE(safetensors::parse_slice_spec("")->empty());
  auto extreme = safetensors::parse_slice_spec("-9223372036854775808:9223372036854775807:-1");
  ASSERT_OK(extreme);
  EXPECT_EQ((*extreme)[0].start, INT64_MIN);
}

TEST(SliceSpec, RejectsBadItemsNamingThem) {
  for (const char* bad : {"a", "1:2:3:4", "1,,2", ",", "1::0", "99999999999999999999", "[0", "1 2", "--1", "1:x"}) {
    auto s = safetensors::parse_slice_spec(bad);
    ASSERT_ERROR(s, error_code::invalid_slice) << bad;
    EXPECT_NE(s.err().message.find(bad), std::string::npos) << s.err().message;
  }
  EXPECT_NE(safetensors::parse_slice_spec("0, x").err().message.find("item 2 ('x')"), std::string::npos);
}

TEST(SlicePlan, ReferenceExamples) {
  one_tensor a(dtype::F32, {1, 2, 3});
  EXPECT_EQ(a.relative(":, :, 0:1"), (std::vector<byte_range>{{0, 4}, {12, 4}}));
  EXPECT_EQ(a.relative(":, 1:2, 0:1"), (std::vector<byte_range>{{12, 4}}));
  one_tensor b(dtype::F32, {2, 3});
  EXPECT_EQ(b.relative(":, 1:3"), (std::vector<byte_range>{{4, 8}, {16, 8}}));
  EXPECT_EQ(b.relative(""), (std::vector<byte_range>{{0, 24}}));
  // The reference errors here; numpy clamps 1:4 to 1:3.
  EXPECT_EQ(b.relative("1, 1:4"), (std::vector<byte_range>{{16, 8}}));
  EXPECT_ERROR(b.plan("1, 1, 1"), error_code::invalid_slice);
  one_tensor f4(dtype::F4, {2, 4});
  EXPECT_EQ(f4.relative(":, 2:4"), (std::vector<byte_range>{{1, 1}, {3, 1}}));
  EXPECT_ERROR(f4.plan(":, 1:3"), error_code::misaligned_slice);
  // Rows of 3 F4 elements are not whole bytes, but two of them are.
  one_tensor f4_odd(dtype::F4, {4, 3});
  EXPECT_EQ(f4_odd.relative("0:2"), (std::vector<byte_range>{{0, 3}}));
  EXPECT_ERROR(f4_odd.plan("0"), error_code::misaligned_slice);
}

TEST(SlicePlan, BeatsTheReferenceBugs) {
  one_tensor a(dtype::U8, {10});
  EXPECT_EQ(a.relative("::2"), (std::vector<byte_range>{{0, 1}, {2, 1}, {4, 1}, {6, 1}, {8, 1}}));  // step honoured
  auto backwards = a.plan("2:1");  // stop < start: empty, no underflow
  ASSERT_OK(backwards);
  EXPECT_EQ(backwards->shape, (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(backwards->ranges.empty());
  EXPECT_ERROR(a.plan("9223372036854775807"), error_code::invalid_slice);  // Select(MAX)
  EXPECT_ERROR(a.plan("-9223372036854775808"), error_code::invalid_slice);
  EXPECT_EQ(a.relative("-9223372036854775808:9223372036854775807:-9223372036854775808").size(), 0U);
  EXPECT_EQ(a.relative("::-9223372036854775808"), (std::vector<byte_range>{{9, 1}}));
  EXPECT_EQ(a.relative("-1::-4"), (std::vector<byte_range>{{9, 1}, {5, 1}, {1, 1}}));
  one_tensor zero(dtype::F32, {0, 3});  // the reference rejects any indexer here
  auto z = zero.plan(":, 1:");
  ASSERT_OK(z);
  EXPECT_EQ(z->shape, (std::vector<std::uint64_t>{0, 2}));
  EXPECT_EQ(z->byte_size, 0U);
  EXPECT_ERROR(zero.plan("0"), error_code::invalid_slice);
  one_tensor two(dtype::F32, {2, 2});
  EXPECT_ERROR(two.plan("..., ..."), error_code::invalid_slice);
  auto zero_step = safetensors::plan_slice(*two.f, "t", std::vector{slice_index::range({}, {}, 0)});
  EXPECT_ERROR(zero_step, error_code::invalid_slice);
}

TEST(SlicePlan, EllipsisAndScalars) {
  one_tensor a(dtype::F16, {2, 3, 4});
  auto p = a.plan("..., 1");
  ASSERT_OK(p);
  EXPECT_EQ(p->shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(p->ranges.size(), 6U);
  auto q = a.plan("1, ...");
  ASSERT_OK(q);
  EXPECT_EQ(q->shape, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(a.relative("1, ..."), (std::vector<byte_range>{{24, 24}}));
  one_tensor scalar(dtype::F64, {});
  EXPECT_EQ(scalar.relative("..."), (std::vector<byte_range>{{0, 8}}));
  EXPECT_ERROR(scalar.plan("0"), error_code::invalid_slice);
}

TEST(SlicePlan, HugeReversedLastDimensionIsRefusedNotAllocated) {
  safetensors::tensor_info t;
  const std::uint64_t shape[] = {std::uint64_t{1} << 23};
  t.name = "big";
  t.type = dtype::U8;
  t.shape = shape;
  t.end = shape[0];
  auto p = safetensors::plan_slice(t, 0, std::vector{slice_index::range({}, {}, -1)});
  ASSERT_ERROR(p, error_code::limit_exceeded);
}

TEST(TensorParallel, EvenAndUnevenSplits) {
  auto r = [](std::uint64_t n, std::uint64_t rank, std::uint64_t world) {
    auto s = safetensors::split_evenly(n, rank, world);
    return std::pair{s.start, s.stop};
  };
  EXPECT_EQ(r(8, 1, 4), (std::pair<std::uint64_t, std::uint64_t>{2, 4}));
  EXPECT_EQ(r(10, 0, 3), (std::pair<std::uint64_t, std::uint64_t>{0, 4}));
  EXPECT_EQ(r(10, 1, 3), (std::pair<std::uint64_t, std::uint64_t>{4, 7}));
  EXPECT_EQ(r(10, 2, 3), (std::pair<std::uint64_t, std::uint64_t>{7, 10}));
  EXPECT_EQ(r(2, 3, 4), (std::pair<std::uint64_t, std::uint64_t>{2, 2}));
  one_tensor a(dtype::F32, {4, 6});
  auto p = safetensors::plan_tensor_parallel(a.info(), a.base(), 1, 1, 2);
  ASSERT_OK(p);
  EXPECT_EQ(p->shape, (std::vector<std::uint64_t>{4, 3}));
  ASSERT_EQ(p->ranges.size(), 4U);
  EXPECT_EQ(p->ranges[0], (byte_range{a.base() + 12, 12}));
  EXPECT_EQ(p->ranges[3], (byte_range{a.base() + 84, 12}));
  auto rows = safetensors::plan_tensor_parallel(a.info(), a.base(), 0, 1, 2);
  ASSERT_OK(rows);
  EXPECT_EQ(rows->ranges, (std::vector<byte_range>{{a.base() + 48, 48}}));
  EXPECT_ERROR(safetensors::plan_tensor_parallel(a.info(), a.base(), 2, 0, 2), error_code::invalid_slice);
  EXPECT_ERROR(safetensors::plan_tensor_parallel(a.info(), a.base(), 0, 2, 2), error_code::invalid_slice);
  EXPECT_ERROR(safetensors::plan_tensor_parallel(a.info(), a.base(), 0, 0, 0), error_code::invalid_slice);
}

// ---- property test -------------------------------------------------------------

/// Positions selected by one indexer, by walking Python's rules one step at a time.
std::optional<std::vector<std::int64_t>> positions(const slice_index& s, std::int64_t n) {
  if (s.type == slice_index::kind::index) {
    const std::int64_t i = s.index < 0 ? s.index + n : s.index;
    if (i < 0 || i >= n) return std::nullopt;
    return std::vector<std::int64_t>{i};
  }
  std::vector<std::int64_t> out;
  auto fix = [&](std::optional<std::int64_t> v, std::int64_t lo, std::int64_t hi, std::int64_t dflt) {
    if (!v) return dflt;
    std::int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp(x, lo, hi);
  };
  if (s.step > 0) {
    for (std::int64_t i = fix(s.start, 0, n, 0); i < fix(s.stop, 0, n, n); i += s.step) out.push_back(i);
  } else {
    for (std::int64_t i = fix(s.start, -1, n - 1, n - 1); i > fix(s.stop, -1, n - 1, -1); i += s.step) {
      out.push_back(i);
    }
  }
  return out;
}

TEST(SliceProperty, MatchesBruteForceGather) {
  std::mt19937_64 rng(20261129);
  const dtype types[] = {dtype::U8, dtype::F16, dtype::BF16, dtype::F32, dtype::C64, dtype::F64};
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  int checked = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    const dtype type = types[pick(0, 5)];
    const auto rank = static_cast<std::size_t>(pick(0, 4));
    std::vector<std::uint64_t> shape;
    for (std::size_t d = 0; d < rank; ++d) shape.push_back(static_cast<std::uint64_t>(pick(0, 6)));
    one_tensor t(type, shape);
    // Random indexers for a random prefix of dimensions, maybe with an ellipsis.
    std::vector<slice_index> idx;
    const auto given = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(rank)));
    const std::int64_t ellipsis_at = pick(-1, static_cast<std::int64_t>(given));
    for (std::size_t k = 0; k < given; ++k) {
      if (static_cast<std::int64_t>(k) == ellipsis_at) idx.push_back(slice_index::ellipsis());
      if (pick(0, 3) == 0) {
        idx.push_back(slice_index::at(pick(-8, 8)));
      } else {
        auto bound = [&]() -> std::optional<std::int64_t> {
          if (pick(0, 2) == 0) return std::nullopt;
          return pick(-9, 9);
        };
        std::int64_t step = pick(-3, 3);
        if (step == 0) step = 1;
        idx.push_back(slice_index::range(bound(), bound(), step));
      }
    }
    // Where the explicit indexers land: after the ellipsis, they index the last dimensions.
    std::vector<slice_index> per_dim(rank, slice_index::all());
    std::size_t d = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (idx[k].type == slice_index::kind::ellipsis) {
        d = rank - (idx.size() - k - 1);
        continue;
      }
      per_dim[d++] = idx[k];
    }
    std::vector<std::vector<std::int64_t>> pos;
    bool out_of_bounds = false;
    for (std::size_t k = 0; k < rank; ++k) {
      auto p = positions(per_dim[k], static_cast<std::int64_t>(shape[k]));
      if (!p) out_of_bounds = true;
      pos.push_back(p.value_or(std::vector<std::int64_t>{}));
    }
    auto plan = safetensors::plan_slice(*t.f, "t", idx);
    SCOPED_TRACE(::testing::Message() << "iteration " << iteration);
    if (out_of_bounds) {
      ASSERT_ERROR(plan, error_code::invalid_slice);
      continue;
    }
    ASSERT_OK(plan);
    std::vector<std::uint64_t> expected_shape;
    for (std::size_t k = 0; k < rank; ++k) {
      if (per_dim[k].type != slice_index::kind::index) expected_shape.push_back(pos[k].size());
    }
    EXPECT_EQ(plan->shape, expected_shape);
    // Brute-force gather, element by element, last dimension fastest.
    const std::size_t element = safetensors::dtype_bits(type) / 8;
    std::vector<std::byte> expected;
    std::vector<std::size_t> at(rank, 0);
    bool any = true;
    for (const auto& p : pos) any = any && !p.empty();
    const auto data = t.f->view("t")->data;
    while (any) {
      std::uint64_t linear = 0;
      for (std::size_t k = 0; k < rank; ++k) linear = linear * shape[k] + static_cast<std::uint64_t>(pos[k][at[k]]);
      expected.insert(expected.end(), data.begin() + static_cast<std::ptrdiff_t>(linear * element),
                      data.begin() + static_cast<std::ptrdiff_t>((linear + 1) * element));
      std::size_t k = rank;
      while (k > 0 && ++at[k - 1] == pos[k - 1].size()) at[--k] = 0;
      if (k == 0) break;
    }
    std::vector<std::byte> got(plan->byte_size);
    ASSERT_OK(safetensors::read_slice(*t.f, *plan, got));
    EXPECT_EQ(got, expected);
    if (iteration % 10 == 0) {  // the pread backend groups nearby ranges through a window
      const auto path = st_test::scratch_dir() / "t.safetensors";
      st_test::write_bytes(path, t.bytes);
      safetensors::open_options o;
      o.backend = safetensors::io_backend::pread;
      auto on_disk = safetensors::file::open(path.string(), o);
      ASSERT_OK(on_disk);
      std::vector<std::byte> preadd(plan->byte_size);
      ASSERT_OK(safetensors::read_slice(*on_disk, *plan, preadd));
      EXPECT_EQ(preadd, expected);
    }
    // Ranges are merged: no two consecutive ones touch.
    for (std::size_t i = 1; i < plan->ranges.size(); ++i) {
      EXPECT_NE(plan->ranges[i - 1].offset + plan->ranges[i - 1].length, plan->ranges[i].offset);
    }
    ++checked;
  }
  EXPECT_GT(checked, 1500);
}

}  // namespace

namespace {

TEST(SliceRobustness, RandomSpecsAndExtremeBoundsNeverCrash) {
  std::mt19937_64 rng(7);
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const std::string alphabet = "0123456789-+:,. []";
  const std::int64_t extremes[] = {
      INT64_MIN,     INT64_MIN + 1, -(std::int64_t{1} << 40), -3, -1, 0, 1, 2, 3, std::int64_t{1} << 40,
      INT64_MAX - 1, INT64_MAX};
  // Planning only: tensor_info without data, so shapes can be large.
  std::vector<std::vector<std::uint64_t>> shapes{
      {}, {0}, {5}, {300, 200}, {0, std::uint64_t{1} << 62, 3}, {UINT64_MAX, 0}, {3, 1, 7, 2}};
  int planned = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<slice_index> idx;
    if (i % 2 == 0) {
      std::string spec;
      for (std::size_t n = pick(12); n > 0; --n) spec += alphabet[pick(alphabet.size())];
      auto parsed = safetensors::parse_slice_spec(spec);
      if (!parsed) {
        EXPECT_ERROR(parsed, error_code::invalid_slice) << spec;
        continue;
      }
      idx = *parsed;
    } else {
      for (std::size_t n = pick(4); n > 0; --n) {
        const auto e = [&] { return extremes[pick(std::size(extremes))]; };
        switch (pick(4)) {
          case 0: idx.push_back(slice_index::at(e())); break;
          case 1: idx.push_back(slice_index::ellipsis()); break;
          default: {
            std::int64_t step = e();
            if (step == 0) step = -1;
            idx.push_back(slice_index::range(pick(3) == 0 ? std::nullopt : std::optional(e()),
                                             pick(3) == 0 ? std::nullopt : std::optional(e()), step));
          }
        }
      }
    }
    const auto& shape = shapes[pick(shapes.size())];
    for (const dtype type : {dtype::U8, dtype::F4, dtype::F32}) {
      const auto size = safetensors::byte_size(type, shape);
      if (size.problem != safetensors::size_problem::none) continue;
      safetensors::tensor_info t;
      t.name = "t";
      t.type = type;
      t.shape = shape;
      t.end = size.bytes;
      auto plan = safetensors::plan_slice(t, 0, idx);
      if (!plan) {
        const auto c = plan.err().code;
        EXPECT_TRUE(c == error_code::invalid_slice || c == error_code::misaligned_slice ||
                    c == error_code::limit_exceeded)
            << plan.err().to_string();
        continue;
      }
      ++planned;
      std::uint64_t sum = 0;
      for (const auto& r : plan->ranges) {
        EXPECT_LE(r.offset + r.length, size.bytes);
        sum += r.length;
      }
      EXPECT_EQ(sum, plan->byte_size);
      EXPECT_LE(plan->byte_size, size.bytes);
    }
  }
  EXPECT_GT(planned, 1000);
}

}  // namespace
