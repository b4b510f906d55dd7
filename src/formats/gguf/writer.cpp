// SPDX-License-Identifier: Apache-2.0
// GGUF v3 writing (gguf_writer.h): the header serialised once into the plan, data
// streamed into a region file (the one SafeTensors' stream_writer uses).
#include <fmt/format.h>

#include "safetensors/formats/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <set>

#include "formats/gguf/tensor_size.h"
#include "safetensors/region_file.h"

namespace safetensors::gguf {
namespace {

constexpr std::size_t max_name_bytes = 63;
using detail::alignment_key;
using detail::max_dims;

class chunk_sink {
 public:
  template <class T>
  void number(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i)
      out_.push_back(static_cast<std::byte>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xFFU));
  }
  void string(std::string_view s) {
    number<std::uint64_t>(s.size());
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out_.insert(out_.end(), p, p + s.size());
  }
  void bytes(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void pad_to(std::uint64_t alignment) {
    while (out_.size() % alignment != 0) out_.push_back(std::byte{0});
  }
  std::vector<std::byte>& data() { return out_; }

 private:
  std::vector<std::byte> out_;
};

void write_value(chunk_sink& out, const value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return out.string(*s);
  if (const auto* a = std::get_if<array_value>(&v)) {
    out.number(static_cast<std::uint32_t>(a->element_type));
    out.number<std::uint64_t>(a->size());
    if (a->element_type == value_type::string) {
      for (const std::string& s : a->strings) out.string(s);
    } else {
      out.bytes(a->packed);
    }
    return;
  }
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          out.number<std::uint8_t>(x ? 1 : 0);
        } else if constexpr (std::is_same_v<T, float>) {
          out.number(std::bit_cast<std::uint32_t>(x));
        } else if constexpr (std::is_same_v<T, double>) {
          out.number(std::bit_cast<std::uint64_t>(x));
        } else if constexpr (std::is_integral_v<T>) {
          out.number(static_cast<std::make_unsigned_t<T>>(x));
        }
      },
      v);
}

[[nodiscard]] error plan_error(std::string message, std::optional<std::string> tensor = std::nullopt) {
  return make_error(error_code::invalid_argument, std::move(message), std::nullopt, std::move(tensor));
}

[[nodiscard]] status size_tensor(tensor_info& t) {
  if (t.name.size() > max_name_bytes) {
    return plan_error(
        fmt::format("tensor name of {} bytes is longer than GGUF's {}-byte limit", t.name.size(), max_name_bytes),
        t.name);
  }
  if (t.shape.size() > max_dims) return plan_error("GGUF tensors have at most 4 dimensions", t.name);
  const detail::tensor_size size = detail::size_of(traits(t.type), t.shape);
  switch (size.problem) {
    case detail::size_problem::none: break;
    case detail::size_problem::dimension_too_large:
    case detail::size_problem::element_overflow: return plan_error("element count overflows", t.name);
    case detail::size_problem::partial_block: return plan_error("row is not a whole number of blocks", t.name);
    case detail::size_problem::byte_overflow: return plan_error("byte size overflows", t.name);
  }
  t.element_count = size.elements;
  t.byte_size = size.bytes;
  return {};
}

// llama.cpp's llama_ftype values for files whose tensors are all unquantized.
constexpr std::uint32_t ftype_all_f32 = 0;
constexpr std::uint32_t ftype_mostly_f16 = 1;
constexpr std::uint32_t ftype_mostly_bf16 = 32;

/// general.file_type says how the tensors are stored; a file whose tensors are all plain
/// (a dequantized model written back) must not keep a quantized file type or
/// general.quantization_version. The type is the 16-bit float holding the most elements,
/// else ALL_F32. Files with a quantized tensor are left as the caller described them.
void match_file_type(std::vector<metadata_entry>& metadata, std::span<const tensor_info> tensors) {
  const auto file_type = std::ranges::find(metadata, std::string_view("general.file_type"), &metadata_entry::key);
  if (file_type == metadata.end()) return;
  std::uint64_t f16 = 0;
  std::uint64_t bf16 = 0;
  for (const tensor_info& t : tensors) {
    const std::optional<dtype> plain = plain_dtype(t.type);
    if (!plain) return;
    if (*plain == dtype::F16) f16 += t.element_count;
    if (*plain == dtype::BF16) bf16 += t.element_count;
  }
  std::uint32_t type = ftype_all_f32;
  if (f16 > 0 || bf16 > 0) type = f16 >= bf16 ? ftype_mostly_f16 : ftype_mostly_bf16;
  file_type->val = value(std::in_place_type<std::uint32_t>, type);
  std::erase_if(metadata, [](const metadata_entry& e) { return e.key == "general.quantization_version"; });
}

}  // namespace

result<write_plan> write_plan::make(std::vector<metadata_entry> metadata, std::vector<tensor_spec> tensors,
                                    std::uint32_t alignment) {
  if (alignment == 0 || !std::has_single_bit(alignment)) return plan_error("alignment must be a power of two");
  std::set<std::string_view> keys;
  for (const metadata_entry& e : metadata) {
    if (e.key.empty()) return plan_error("empty metadata key");
    if (!keys.insert(e.key).second) return plan_error("duplicate metadata key '" + e.key + "'");
  }
  const auto align_entry = std::ranges::find(metadata, alignment_key, &metadata_entry::key);
  if (align_entry != metadata.end()) {
    align_entry->val = value(std::in_place_type<std::uint32_t>, alignment);
  } else {
    metadata.push_back({std::string(alignment_key), value(std::in_place_type<std::uint32_t>, alignment)});
  }
  write_plan plan;
  std::set<std::string_view> names;
  std::uint64_t running = 0;
  for (tensor_spec& spec : tensors) {
    tensor_info t;
    t.name = std::move(spec.name);
    t.type = spec.type;
    t.shape = std::move(spec.shape);
    if (status s = size_tensor(t); !s) return std::move(s).err();
    t.offset = running;
    const std::uint64_t padded = t.byte_size + (alignment - t.byte_size % alignment) % alignment;
    if (padded < t.byte_size || running > UINT64_MAX - padded) return plan_error("data size overflows", t.name);
    running += padded;
    plan.tensors_.push_back(std::move(t));
  }
  for (const tensor_info& t : plan.tensors_) {
    if (!names.insert(t.name).second) return plan_error("duplicate tensor name '" + t.name + "'", t.name);
  }
  match_file_type(metadata, plan.tensors_);
  chunk_sink out;
  out.number<std::uint32_t>(0x46554747);  // "GGUF"
  out.number<std::uint32_t>(3);
  out.number<std::uint64_t>(plan.tensors_.size());
  out.number<std::uint64_t>(metadata.size());
  for (const metadata_entry& e : metadata) {
    out.string(e.key);
    out.number(static_cast<std::uint32_t>(type_of(e.val)));
    write_value(out, e.val);
  }
  for (const tensor_info& t : plan.tensors_) {
    out.string(t.name);
    out.number<std::uint32_t>(static_cast<std::uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) out.number<std::uint64_t>(*it);
    out.number(static_cast<std::uint32_t>(t.type));
    out.number<std::uint64_t>(t.offset);
  }
  out.pad_to(alignment);
  plan.header_ = std::move(out.data());
  plan.data_size_ = running;
  return plan;
}

struct stream_writer::state {
  write_plan plan;
  safetensors::region_file file;
};

stream_writer::stream_writer(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
stream_writer::stream_writer(stream_writer&&) noexcept = default;
stream_writer& stream_writer::operator=(stream_writer&&) noexcept = default;
stream_writer::~stream_writer() = default;

result<stream_writer> stream_writer::create(const std::string& path, write_plan plan) {
  std::vector<safetensors::region_file::region> regions;
  regions.reserve(plan.tensors().size());
  for (const tensor_info& t : plan.tensors()) regions.push_back({plan.data_start() + t.offset, t.byte_size});
  auto file = safetensors::region_file::create(path, plan.file_size(), plan.header_bytes(), std::move(regions));
  if (!file) return std::move(file).err();
  return stream_writer(std::make_unique<state>(state{std::move(plan), std::move(file).value()}));
}

status stream_writer::append(std::size_t index, std::span<const std::byte> chunk) {
  if (index >= state_->plan.tensors().size()) return plan_error(fmt::format("no tensor {} in the plan", index));
  return state_->file.append(index, state_->plan.tensors()[index].name, chunk);
}

status stream_writer::commit() {
  return state_->file.commit([&](std::size_t i) -> std::string_view { return state_->plan.tensors()[i].name; });
}

void stream_writer::abort() noexcept { state_->file.abort(); }

const write_plan& stream_writer::plan() const noexcept { return state_->plan; }

}  // namespace safetensors::gguf
