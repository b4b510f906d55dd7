// SPDX-License-Identifier: Apache-2.0
// The format table (safetensors/pipeline/format_table.h): a format is one row. A test-only
// text format, registered here and nowhere else, is read and written by `convert` and
// described by inspect's describe rows; the built-in rows choose readers, writers and the
// options they take by id and capability, never by display name.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "safetensors/file.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/pipeline/format_table.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

// "Tensor text": one F32 vector a line, its name then its values ("w 1 2 3"). No magic bytes:
// files are known by their extension, .ttxt.
struct text_tensor {
  std::string name;
  std::vector<float> values;
};

st::result<std::vector<text_tensor>> read_text_tensors(const std::string& path) {
  std::ifstream in(path);
  if (!in) return st::make_error(st::error_code::io, "cannot read").with_path(path);
  std::vector<text_tensor> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    text_tensor t;
    if (!(words >> t.name)) continue;
    for (float v = 0; words >> v;) t.values.push_back(v);
    out.push_back(std::move(t));
  }
  return out;
}

class text_source final : public sp::tensor_source {
 public:
  text_source(std::string path, std::vector<text_tensor> tensors) : text_(std::move(tensors)) {
    format_ = "Tensor text";
    format_id_ = "ttxt";
    path_ = std::move(path);
    for (const auto& t : text_) tensors_.push_back({t.name, st::dtype::F32, {t.values.size()}});
  }

  st::status read(std::size_t index, const st::chunk_sink& consume) const override {
    return consume(std::as_bytes(std::span(text_[index].values)));
  }

 private:
  std::vector<text_tensor> text_;
};

class text_sink final : public sp::tensor_sink {
 public:
  explicit text_sink(std::string path) : path_(std::move(path)) {}

  st::status write(const sp::tensor_source& source) override {
    std::string text;
    for (std::size_t i = 0; i < source.tensors().size(); ++i) {
      const auto& t = source.tensors()[i];
      if (t.type != st::dtype::F32 || t.shape.size() != 1) {
        return st::make_error(st::error_code::invalid_argument, "tensor text holds F32 vectors only", std::nullopt,
                              t.name);
      }
      std::vector<std::byte> bytes;
      auto s = source.read(i, [&](std::span<const std::byte> chunk) -> st::status {
        bytes.insert(bytes.end(), chunk.begin(), chunk.end());
        return {};
      });
      if (!s) return s;
      std::vector<float> values(bytes.size() / sizeof(float));
      std::memcpy(values.data(), bytes.data(), bytes.size());
      text += fmt::format("{} {}\n", t.name, fmt::join(values, " "));
    }
    std::ofstream(path_) << text;
    files_ = {path_};
    return {};
  }

 private:
  std::string path_;
};

st::result<sp::format_description> describe_text(const std::string& path, sp::description_style style) {
  auto tensors = read_text_tensors(path);
  if (!tensors) return std::move(tensors).err();
  sp::format_description d;
  d.format = "tensor text";
  d.extra_title = "first";
  for (const auto& t : *tensors) {
    d.tensors.push_back({t.name,
                         "F32",
                         {t.values.size()},
                         t.values.size() * sizeof(float),
                         t.values.size(),
                         t.values.empty() ? "" : fmt::format("{}", t.values.front()),
                         {},
                         {}});
  }
  if (style == sp::description_style::json) d.json = R"({"format":"ttxt"})";
  return d;
}

/// Registers the tensor text row once per process: the table is global.
void register_text_format() {
  static const bool registered = [] {
    EXPECT_OK(sp::register_format({
        .id = "ttxt",
        .name = "Tensor text",
        .extensions = {".TTXT"},  // stored lower case
        .sniff = {},
        .open = [](const std::string& path, const sp::source_options&) -> st::result<sp::source_ptr> {
          auto tensors = read_text_tensors(path);
          if (!tensors) return std::move(tensors).err();
          return sp::source_ptr(std::make_unique<text_source>(path, std::move(tensors).value()));
        },
        .make_sink = [](const std::string& path, const sp::sink_options&) -> sp::sink_ptr {
          return std::make_unique<text_sink>(path);
        },
        .describe = describe_text,
        .takes = {},
    }));
    return true;
  }();
  ASSERT_TRUE(registered);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(FormatTable, ARegisteredFormatIsConvertedFromAndToAndDescribed) {
  register_text_format();
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = dir / "in.ttxt";
  std::ofstream(in) << "b 4.5\nw 1 2 3\n";

  const fs::path out = dir / "out.safetensors";
  auto summary = sp::convert(in.string(), out.string());
  ASSERT_OK(summary);
  EXPECT_EQ(summary->input_format, "Tensor text");
  EXPECT_EQ(summary->output->id, "safetensors");
  auto f = st::file::open(out.string());
  ASSERT_OK(f);
  ASSERT_EQ(f->tensors().size(), 2U);
  auto w = f->view("w");
  ASSERT_OK(w);
  ASSERT_EQ(w->data.size(), 3 * sizeof(float));
  float values[3];
  std::memcpy(values, w->data.data(), sizeof values);
  EXPECT_EQ(values[2], 3.0F);

  // Back, chosen by the output's extension.
  const fs::path back = dir / "back.ttxt";
  auto again = sp::convert(out.string(), back.string());
  ASSERT_OK(again);
  EXPECT_EQ(again->output->name, "Tensor text");
  EXPECT_EQ(read_text(back), "b 4.5\nw 1 2 3\n");

  // inspect's rows: the table's row for the file, then its describer.
  auto row = sp::format_of_file(in.string());
  ASSERT_OK(row);
  ASSERT_NE(*row, nullptr);
  EXPECT_EQ((*row)->id, "ttxt");
  auto d = (*row)->describe(in.string(), sp::description_style::rows);
  ASSERT_OK(d);
  ASSERT_EQ(d->tensors.size(), 2U);
  EXPECT_EQ(d->tensors[0].name, "b");
  EXPECT_EQ(d->tensors[0].extra, "4.5");
  EXPECT_EQ(d->tensors[1].name, "w");
  EXPECT_EQ(d->tensors[1].elements, 3U);
}

TEST(FormatTable, MagicBytesWinOverAnExtension) {
  register_text_format();
  const fs::path path = st_test::scratch_dir() / "really.ttxt";
  const std::vector<float> one{1.0F};
  const std::vector<st::tensor_data> tensors{{"x", st::dtype::F32, {1}, std::as_bytes(std::span(one))}};
  ASSERT_OK(st::write_file(path.string(), tensors));
  auto row = sp::format_of_file(path.string());
  ASSERT_OK(row);
  ASSERT_NE(*row, nullptr);
  EXPECT_EQ((*row)->id, "safetensors");
}

TEST(FormatTable, WrittenFormatsInMessagesComeFromTheTable) {
  register_text_format();
  auto unknown = sp::output_format_for("out.unknown");
  EXPECT_ERROR(unknown, st::error_code::invalid_argument);
  EXPECT_NE(unknown.err().message.find(".safetensors, .npz, .npy, .gguf or .ttxt"), std::string::npos)
      << unknown.err().message;
  auto pytorch = sp::output_format_for("out.pt");
  EXPECT_ERROR(pytorch, st::error_code::invalid_argument);
  EXPECT_NE(pytorch.err().message.find("PyTorch files are read, not written"), std::string::npos);
  auto by_id = sp::output_format_for("out.bin", "ttxt");
  ASSERT_OK(by_id);
  EXPECT_EQ((*by_id)->id, "ttxt");
}

TEST(FormatTable, RowsNeedAnIdOfTheirOwn) {
  sp::format_row nameless;
  nameless.name = "no id";
  EXPECT_ERROR(sp::register_format(nameless), st::error_code::invalid_argument);
  sp::format_row taken_id;
  taken_id.id = "gguf";
  taken_id.name = "another GGUF";
  auto taken = sp::register_format(taken_id);
  EXPECT_ERROR(taken, st::error_code::invalid_argument);
  EXPECT_EQ(sp::find_format("gguf")->name, "GGUF");
}

TEST(FormatTable, OptionsApplyByTheFormatsIdNotItsName) {
  // A source that calls itself "PyTorch" but is of no PyTorch row does not take PyTorch's options.
  class named_like_pytorch final : public sp::tensor_source {
   public:
    named_like_pytorch() { format_ = "PyTorch"; }
    st::status read(std::size_t, const st::chunk_sink&) const override { return {}; }
  };
  sp::convert_options options;
  options.read.key = "state_dict";
  const fs::path out = st_test::scratch_dir() / "never.safetensors";
  auto r = sp::convert(std::make_unique<named_like_pytorch>(), out.string(), options);
  EXPECT_ERROR(r, st::error_code::invalid_argument);
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
