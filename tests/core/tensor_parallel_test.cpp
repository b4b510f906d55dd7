// SPDX-License-Identifier: Apache-2.0
// Tensor-parallel plans: parsing (and every kind of bad plan), which rule places a tensor,
// and each rank's parts of a sharded checkpoint, read with one pread per run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "safetensors/checkpoint_write.h"
#include "safetensors/distributed/tensor_parallel.h"
#include "safetensors/multi_range_reader.h"
#include "safetensors/slice.h"
#include "safetensors/writer.h"
#include "support/fault_injector.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::dtype;
using safetensors::error_code;
using safetensors::tp_split;

/// A tensor_info over a shape the test owns.
struct fake_tensor {
  std::vector<std::uint64_t> shape;
  safetensors::tensor_info info;
  fake_tensor(std::string_view name, std::vector<std::uint64_t> s) : shape(std::move(s)) {
    info.name = name;
    info.type = dtype::F32;
    info.shape = shape;
  }
};

safetensors::tp_plan plan_of(std::string_view json) {
  auto p = safetensors::parse_tp_plan(json);
  EXPECT_OK(p);
  return p ? std::move(p).value() : safetensors::tp_plan{};
}

/// The message of a failed parse, which must be InvalidArgument.
std::string parse_failure(std::string_view json) {
  auto p = safetensors::parse_tp_plan(json);
  EXPECT_ERROR(p, error_code::invalid_argument) << json;
  return p ? std::string() : p.err().message;
}

TEST(TensorParallelPlan, ParsesRulesInOrder) {
  auto p = safetensors::parse_tp_plan(R"({
    "*.q_proj.weight": {"split": "column"},
    "*.o_proj.weight": {"split": "row"},
    "*.embed.weight": {"split": "column", "dim": -1},
    "*.norm.weight": "replicate",
    "lm_head.weight": "column"
  })");
  ASSERT_OK(p);
  ASSERT_EQ(p->rules.size(), 5U);
  EXPECT_EQ(p->rules[0].pattern, "*.q_proj.weight");
  EXPECT_EQ(p->rules[0].split, tp_split::column);
  EXPECT_EQ(p->rules[0].dim, std::nullopt);
  EXPECT_EQ(p->rules[1].split, tp_split::row);
  EXPECT_EQ(p->rules[2].dim, -1);
  EXPECT_EQ(p->rules[3].split, tp_split::replicate);
  EXPECT_EQ(p->rules[4].split, tp_split::column);
  EXPECT_EQ(safetensors::tp_split_name(tp_split::row), "row");
  EXPECT_OK(safetensors::parse_tp_plan("{}"));
}

TEST(TensorParallelPlan, BadPlansAreClearErrors) {
  EXPECT_NE(parse_failure("").find("empty text"), std::string::npos);
  EXPECT_NE(parse_failure("{\"a\": ").find("invalid JSON"), std::string::npos);
  EXPECT_NE(parse_failure("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_EQ(parse_failure(R"({"w": {"split": "diagonal"}})"),
            "tensor-parallel plan: rule 'w': unknown split 'diagonal' (expected column, row or replicate)");
  EXPECT_NE(parse_failure(R"({"w": "cols"})").find("unknown split 'cols'"), std::string::npos);
  EXPECT_EQ(parse_failure(R"({"w": {"split": "row", "dims": 1}})"),
            "tensor-parallel plan: rule 'w': unknown key 'dims' (expected split, dim)");
  EXPECT_EQ(parse_failure(R"({"w": {"split": "row", "dim": 1.5}})"),
            "tensor-parallel plan: rule 'w': dim 1.5 is not an integer");
  EXPECT_NE(parse_failure(R"({"w": {"split": "row", "dim": "1"}})").find("is not an integer"), std::string::npos);
  EXPECT_NE(parse_failure(R"({"w": {"split": "row", "dim": 18446744073709551615}})").find("too large"),
            std::string::npos);
  EXPECT_EQ(parse_failure(R"({"w": {"split": "replicate", "dim": 0}})"),
            "tensor-parallel plan: rule 'w': a replicated tensor has no dim");
  EXPECT_EQ(parse_failure(R"({"w": {"dim": 0}})"), "tensor-parallel plan: rule 'w' has no split");
  EXPECT_NE(parse_failure(R"({"w": {"split": 3}})").find("split is not a string"), std::string::npos);
  EXPECT_NE(parse_failure(R"({"w": 1})").find("rule 'w' is not an object"), std::string::npos);
  EXPECT_NE(parse_failure(R"({"": "row"})").find("empty name pattern"), std::string::npos);
  auto dup = safetensors::parse_tp_plan(R"({"w": "row", "w": "column"})");
  EXPECT_ERROR(dup, error_code::duplicate_key);
}

TEST(TensorParallelPlan, FirstMatchingRuleWinsAndTheRestIsReplicated) {
  const auto plan = plan_of(R"({"layers.0.w": "row", "layers.*.w": "column", "*.b": {"split": "column"}})");
  fake_tensor w0("layers.0.w", {8, 12});
  fake_tensor w1("layers.1.w", {8, 12});
  fake_tensor b("layers.1.b", {8});
  fake_tensor other("norm", {3});
  auto p0 = safetensors::place_tensor(plan, w0.info, 4);
  ASSERT_OK(p0);
  EXPECT_EQ(p0->rule, &plan.rules[0]);
  EXPECT_EQ(p0->split, tp_split::row);
  EXPECT_EQ(p0->dim, 1U);
  auto p1 = safetensors::place_tensor(plan, w1.info, 4);
  ASSERT_OK(p1);
  EXPECT_EQ(p1->rule, &plan.rules[1]);
  EXPECT_EQ(p1->dim, 0U);
  auto pb = safetensors::place_tensor(plan, b.info, 4);
  ASSERT_OK(pb);
  EXPECT_EQ(pb->split, tp_split::column);
  auto po = safetensors::place_tensor(plan, other.info, 4);
  ASSERT_OK(po);
  EXPECT_EQ(po->rule, nullptr);
  EXPECT_EQ(po->split, tp_split::replicate);
  // Negative dims count from the end.
  const auto last = plan_of(R"({"*": {"split": "column", "dim": -1}})");
  auto pl = safetensors::place_tensor(last, w1.info, 4);
  ASSERT_OK(pl);
  EXPECT_EQ(pl->dim, 1U);
}

TEST(TensorParallelPlan, TensorsThePlanDoesNotFitAreClearErrors) {
  fake_tensor bias("h.bias", {12});
  auto row_of_vector = safetensors::place_tensor(plan_of(R"({"*.bias": "row"})"), bias.info, 4);
  ASSERT_ERROR(row_of_vector, error_code::invalid_argument);
  EXPECT_EQ(row_of_vector.err().message,
            "tensor-parallel plan: rule '*.bias' (row split) needs dim 1, but tensor 'h.bias' of shape [12] has 1 "
            "dimension");
  EXPECT_EQ(row_of_vector.err().tensor, "h.bias");
  fake_tensor w("h.w", {6, 8});
  for (const char* json : {R"({"h.w": {"split": "column", "dim": 2}})", R"({"h.w": {"split": "row", "dim": -3}})"}) {
    auto out_of_range = safetensors::place_tensor(plan_of(json), w.info, 2);
    ASSERT_ERROR(out_of_range, error_code::invalid_argument);
    EXPECT_NE(out_of_range.err().message.find("shape [6, 8] has 2 dimensions"), std::string::npos);
  }
  auto uneven = safetensors::place_tensor(plan_of(R"({"h.w": "column"})"), w.info, 4);
  ASSERT_ERROR(uneven, error_code::invalid_argument);
  EXPECT_EQ(uneven.err().message,
            "tensor-parallel plan: rule 'h.w' (column split) splits dim 0 of tensor 'h.w' (shape [6, 8]): 6 does not "
            "divide evenly over 4 ranks");
  EXPECT_OK(safetensors::place_tensor(plan_of(R"({"h.w": "row"})"), w.info, 4));  // 8 does
  EXPECT_ERROR(safetensors::place_tensor(plan_of("{}"), w.info, 0), error_code::invalid_argument);
  fake_tensor scalar("s", {});
  EXPECT_ERROR(safetensors::place_tensor(plan_of(R"({"s": "column"})"), scalar.info, 1), error_code::invalid_argument);
}

/// A sharded checkpoint: F32 matrices split by column and by row, a column-split bias and a
/// replicated norm, with values 0, 1, 2, ... so every element is recognisable.
struct tp_fixture {
  std::filesystem::path dir = st_test::scratch_dir();
  std::vector<std::vector<float>> values;
  std::vector<safetensors::tensor_data> tensors;
  static constexpr const char* plan_json =
      R"({"*.up.weight": "column", "*.up.bias": "column", "*.down.weight": "row"})";

  tp_fixture() {
    add("layers.0.up.weight", {16, 12});
    add("layers.0.up.bias", {16});
    add("layers.0.down.weight", {12, 16});
    add("layers.0.norm", {12});
    add("layers.1.up.weight", {16, 12});
    add("layers.1.down.weight", {12, 16});
    safetensors::shard_write_options o;
    o.max_shard_bytes = 1'600;
    EXPECT_OK(safetensors::write_checkpoint(dir.string(), tensors, o));
  }
  void add(const char* name, std::vector<std::uint64_t> shape) {
    const auto n = std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<>());
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), static_cast<float>(values.size() * 1000));
    values.push_back(std::move(v));
    tensors.push_back({name, dtype::F32, std::move(shape), std::as_bytes(std::span(values.back()))});
  }
  /// torch.chunk(t, world, dim)[rank] of a 1- or 2-D tensor, flattened.
  [[nodiscard]] std::vector<float> chunk(std::size_t i, std::size_t dim, std::size_t rank, std::size_t world) const {
    const auto& shape = tensors[i].shape;
    const std::size_t rows = shape[0];
    const std::size_t cols = shape.size() > 1 ? shape[1] : 1;
    std::vector<float> out;
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        const std::size_t along = dim == 0 ? r : c;
        const std::size_t part = (dim == 0 ? rows : cols) / world;
        if (along / part == rank) out.push_back(values[i][r * cols + c]);
      }
    }
    return out;
  }
};

std::vector<float> floats(const safetensors::loaded_tensor& t) {
  std::vector<float> out(t.size / sizeof(float));
  std::memcpy(out.data(), t.storage.get(), t.size);
  return out;
}

TEST(TensorParallelLoad, EveryRankGetsItsChunkOfAShardedCheckpoint) {
  tp_fixture fx;
  auto c = safetensors::checkpoint::open(fx.dir.string());
  ASSERT_OK(c);
  ASSERT_GT(c->shards().size(), 1U);
  const auto plan = plan_of(tp_fixture::plan_json);
  constexpr std::size_t world = 4;
  // name -> (fixture index, dim; dim 9 = replicated)
  const std::map<std::string, std::pair<std::size_t, std::size_t>> expect = {
      {"layers.0.up.weight", {0, 0}}, {"layers.0.up.bias", {1, 0}},   {"layers.0.down.weight", {2, 1}},
      {"layers.0.norm", {3, 9}},      {"layers.1.up.weight", {4, 0}}, {"layers.1.down.weight", {5, 1}}};
  std::uint64_t all_split_bytes = 0;
  for (std::size_t rank = 0; rank < world; ++rank) {
    SCOPED_TRACE(fmt::format("rank {}", rank));
    auto mine = safetensors::plan_tp_rank(*c, plan, rank, world);
    ASSERT_OK(mine);
    auto loaded = safetensors::load_tp_rank(*mine);
    ASSERT_OK(loaded);
    ASSERT_EQ(loaded->size(), expect.size());
    for (const auto& t : *loaded) {
      SCOPED_TRACE(t.name);
      const auto [i, dim] = expect.at(t.name);
      if (dim == 9) {
        EXPECT_EQ(floats(t), fx.values[i]);
        EXPECT_EQ(t.shape, fx.tensors[i].shape);
      } else {
        EXPECT_EQ(floats(t), fx.chunk(i, dim, rank, world));
        auto shape = fx.tensors[i].shape;
        shape[dim] /= world;
        EXPECT_EQ(t.shape, shape);
      }
    }
    // Split tensors: a quarter each; the norm whole on every rank.
    EXPECT_EQ(mine->split_full_bytes, (192 + 16 + 192 + 192 + 192) * 4U);
    EXPECT_EQ(mine->split_bytes * world, mine->split_full_bytes);
    EXPECT_EQ(mine->bytes, mine->split_bytes + 12 * 4U);
    all_split_bytes += mine->split_bytes;
  }
  EXPECT_EQ(all_split_bytes, (192 + 16 + 192 + 192 + 192) * 4U);
  EXPECT_ERROR(safetensors::plan_tp_rank(*c, plan, 4, 4), error_code::invalid_argument);
  EXPECT_ERROR(safetensors::plan_tp_rank(*c, plan, 0, 0), error_code::invalid_argument);
  // A plan that fits no tensor fails every rank the same way, naming tensor and shard.
  auto uneven = safetensors::plan_tp_rank(*c, plan_of(R"({"*.norm": "column"})"), 0, 5);
  ASSERT_ERROR(uneven, error_code::invalid_argument);
  EXPECT_EQ(uneven.err().tensor, "layers.0.norm");
  EXPECT_NE(uneven.err().path.find(".safetensors"), std::string::npos);
}

TEST(TensorParallelLoad, ReadsOnePreadPerRunOfTheRanksPart) {
  tp_fixture fx;
  safetensors::checkpoint_options co;
  co.shard.backend = safetensors::io_backend::pread;
  auto c = safetensors::checkpoint::open(fx.dir.string(), co);
  ASSERT_OK(c);
  auto mine = safetensors::plan_tp_rank(*c, plan_of(tp_fixture::plan_json), 1, 4);
  ASSERT_OK(mine);
  std::uint64_t runs = 0;
  for (const auto& t : mine->tensors) runs += t.part.ranges.size();
  // Contiguous parts are one run: column splits of [16, 12] and the bias, the norm; a row split
  // of [12, 16] is 12 runs of 4 floats.
  EXPECT_EQ(runs, 1U + 1U + 12U + 1U + 1U + 12U);
  safetensors::load_options o;
  o.threads = 1;  // the injector counts calls of one thread
  st_test::fault_injector count;
  auto loaded = safetensors::load_tp_rank(*mine, o);
  ASSERT_OK(loaded);
  EXPECT_EQ(count.calls(st_test::sys_call::pread), runs);
}

TEST(TensorParallelLoad, EachRankPreadsOnlyItsOwnBytes) {
  // Issue 38: a row split wants 1/world of every row. Rows of 1 KiB lie within one read
  // window, and at world 2 the pread backend used to read them whole through a bounce
  // buffer (2x the rank's bytes); every rank must now read at most 1.05x its bytes.
  const std::filesystem::path dir = st_test::scratch_dir();
  constexpr std::uint64_t rows = 256;
  constexpr std::uint64_t cols = 256;
  std::vector<float> values(rows * cols);
  std::iota(values.begin(), values.end(), 0.0F);
  const std::vector<safetensors::tensor_data> tensors = {
      {"l.down.weight", dtype::F32, {rows, cols}, std::as_bytes(std::span(values))},
      {"l.up.weight", dtype::F32, {rows, cols}, std::as_bytes(std::span(values))}};
  ASSERT_OK(safetensors::write_checkpoint(dir.string(), tensors, {}));
  safetensors::checkpoint_options co;
  co.shard.backend = safetensors::io_backend::pread;
  auto c = safetensors::checkpoint::open(dir.string(), co);
  ASSERT_OK(c);
  const auto plan = plan_of(R"({"*.down.weight": "row", "*.up.weight": "column"})");
  for (std::uint64_t world : {2U, 4U, 8U}) {
    for (std::uint64_t rank = 0; rank < world; ++rank) {
      SCOPED_TRACE(fmt::format("rank {} of {}", rank, world));
      auto mine = safetensors::plan_tp_rank(*c, plan, rank, world);
      ASSERT_OK(mine);
      safetensors::load_options o;
      o.threads = 1;  // the injector counts calls of one thread
      st_test::fault_injector count;
      auto loaded = safetensors::load_tp_rank(*mine, o);
      ASSERT_OK(loaded);
      EXPECT_EQ(mine->bytes, 2 * rows * cols * sizeof(float) / world);
      EXPECT_LE(count.bytes(st_test::sys_call::pread) * 100, mine->bytes * 105);
      for (const auto& t : *loaded) {
        if (t.name != "l.down.weight") continue;
        const std::uint64_t part = cols / world;
        std::vector<float> expected;
        for (std::uint64_t r = 0; r < rows; ++r)
          for (std::uint64_t k = 0; k < part; ++k) expected.push_back(values[r * cols + rank * part + k]);
        EXPECT_EQ(floats(t), expected);
      }
    }
  }
}

TEST(TensorParallelLoad, NearlyWholeRowsStillShareOnePread) {
  // Gaps of under 1/20 of the wanted bytes are cheaper read than skipped: 4 of every 64
  // floats left out of a 256 x 64 matrix (64 KiB) still takes one pread, not 256.
  const std::filesystem::path path = st_test::scratch_dir() / "dense.safetensors";
  std::vector<float> values(256 * 64);
  std::iota(values.begin(), values.end(), 0.0F);
  const std::vector<safetensors::tensor_data> tensors = {
      {"w", dtype::F32, {256, 64}, std::as_bytes(std::span(values))}};
  ASSERT_OK(safetensors::write_file(path.string(), tensors));
  safetensors::open_options oo;
  oo.backend = safetensors::io_backend::pread;
  auto f = safetensors::file::open(path.string(), oo);
  ASSERT_OK(f);
  const std::vector<safetensors::slice_index> spec = {safetensors::slice_index::all(),
                                                      safetensors::slice_index::range(0, 62)};
  auto plan = safetensors::plan_slice(*f, "w", spec);
  ASSERT_OK(plan);
  ASSERT_EQ(plan->ranges.size(), 256U);
  std::vector<std::byte> out(plan->byte_size);
  st_test::fault_injector count;
  ASSERT_OK(safetensors::read_slice(*f, *plan, out));
  EXPECT_EQ(count.calls(st_test::sys_call::pread), 1U);
  EXPECT_LE(count.bytes(st_test::sys_call::pread) * 100, plan->byte_size * 105);
  std::vector<float> got(out.size() / sizeof(float));
  std::memcpy(got.data(), out.data(), out.size());
  EXPECT_EQ(got[61], 61.0F);
  EXPECT_EQ(got[62], 64.0F);
  EXPECT_EQ(got.back(), static_cast<float>(255 * 64 + 61));
}

/// A file in memory behind the multi_range_reader interface, counting the calls of each kind.
class counting_reader final : public safetensors::multi_range_reader {
 public:
  explicit counting_reader(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  const std::string& name() const noexcept override { return name_; }
  std::uint64_t size() const noexcept override { return bytes_.size(); }
  safetensors::status read(std::uint64_t offset, std::span<std::byte> destination) const override {
    ++reads;
    std::memcpy(destination.data(), bytes_.data() + offset, destination.size());
    return {};
  }
  safetensors::status read_ranges(std::span<const safetensors::byte_range> ranges,
                                  std::span<std::byte> destination) const override {
    ++range_calls;
    range_count += ranges.size();
    std::size_t at = 0;
    for (const auto& r : ranges) {
      std::memcpy(destination.data() + at, bytes_.data() + r.offset, r.length);
      at += r.length;
    }
    return {};
  }
  mutable std::atomic<int> reads{0};
  mutable std::atomic<int> range_calls{0};
  mutable std::atomic<std::size_t> range_count{0};

 private:
  std::string name_ = "counting";
  std::vector<std::byte> bytes_;
};

TEST(TensorParallelLoad, MultiRangeReaderGetsARowPartsRunsInOneCall) {
  std::vector<float> w(12 * 16);
  std::iota(w.begin(), w.end(), 0.0F);
  const std::vector<safetensors::tensor_data> data = {{"w", dtype::F32, {12, 16}, std::as_bytes(std::span(w))}};
  auto bytes = safetensors::serialize(data);
  ASSERT_OK(bytes);
  auto reader = std::make_shared<counting_reader>(std::move(bytes).value());
  auto f = safetensors::file::open_reader(reader);
  ASSERT_OK(f);
  const int opening_reads = reader->reads;
  auto part = safetensors::plan_tensor_parallel(*f->find("w"), f->header().data_start(), 1, 2, 4);
  ASSERT_OK(part);
  ASSERT_EQ(part->ranges.size(), 12U);  // one run of 4 floats per row
  std::vector<float> got(12 * 4);
  const std::vector<safetensors::load_request> requests = {
      {&*f, f->find("w"), &*part, std::as_writable_bytes(std::span(got))}};
  ASSERT_OK(safetensors::load(requests));
  EXPECT_EQ(reader->range_calls, 1);  // the loader hands all 12 runs over at once ...
  EXPECT_EQ(reader->range_count, 12U);
  EXPECT_EQ(reader->reads, opening_reads);  // ... and reads none of them alone
  for (std::size_t r = 0; r < 12; ++r) {
    for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(got[r * 4 + c], w[r * 16 + 8 + c]);
  }
}

/// A file in memory behind the plain range_reader interface (one round trip per read).
class single_range_reader final : public safetensors::range_reader {
 public:
  explicit single_range_reader(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  const std::string& name() const noexcept override { return name_; }
  std::uint64_t size() const noexcept override { return bytes_.size(); }
  safetensors::status read(std::uint64_t offset, std::span<std::byte> destination) const override {
    ++reads;
    std::memcpy(destination.data(), bytes_.data() + offset, destination.size());
    return {};
  }
  mutable std::atomic<int> reads{0};

 private:
  std::string name_ = "single";
  std::vector<std::byte> bytes_;
};

TEST(TensorParallelLoad, PlainRangeReaderStillReadsHalfWantedWindowsAtOnce) {
  // A round trip costs more than the gaps: a rank's half of 64 rows is one read, not 64.
  std::vector<float> w(64 * 16);
  std::iota(w.begin(), w.end(), 0.0F);
  const std::vector<safetensors::tensor_data> data = {{"w", dtype::F32, {64, 16}, std::as_bytes(std::span(w))}};
  auto bytes = safetensors::serialize(data);
  ASSERT_OK(bytes);
  auto reader = std::make_shared<single_range_reader>(std::move(bytes).value());
  auto f = safetensors::file::open_reader(reader);
  ASSERT_OK(f);
  const int opening_reads = reader->reads;
  auto part = safetensors::plan_tensor_parallel(*f->find("w"), f->header().data_start(), 1, 1, 2);
  ASSERT_OK(part);
  ASSERT_EQ(part->ranges.size(), 64U);
  std::vector<float> got(64 * 8);
  ASSERT_OK(safetensors::read_slice(*f, *part, std::as_writable_bytes(std::span(got))));
  EXPECT_EQ(reader->reads, opening_reads + 1);
  for (std::size_t r = 0; r < 64; ++r) {
    for (std::size_t c = 0; c < 8; ++c) EXPECT_EQ(got[r * 8 + c], w[r * 16 + 8 + c]);
  }
}

TEST(TensorParallelLoad, DestinationsMustMatchThePlan) {
  tp_fixture fx;
  auto c = safetensors::checkpoint::open(fx.dir.string());
  ASSERT_OK(c);
  auto mine = safetensors::plan_tp_rank(*c, plan_of("{}"), 0, 1);
  ASSERT_OK(mine);
  EXPECT_EQ(mine->split_bytes, 0U);
  std::vector<std::span<std::byte>> none;
  EXPECT_ERROR(safetensors::load_tp_rank(*mine, none), error_code::invalid_argument);
}

}  // namespace
