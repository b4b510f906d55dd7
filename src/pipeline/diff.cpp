// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/diff.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "safetensors/pipeline/chunk_cast.h"
#include "streaming_open.h"

namespace safetensors::pipeline {
namespace {

/// Elements per chunk when decoding values (a multiple of 8, so sub-byte chunks fill whole bytes).
constexpr std::uint64_t chunk_elements = std::uint64_t{1} << 19;

std::vector<metadata_difference> metadata_differences(const file& a, const file& b) {
  const metadata_map empty;
  const auto& ma = a.header().metadata() ? *a.header().metadata() : empty;
  const auto& mb = b.header().metadata() ? *b.header().metadata() : empty;
  std::vector<metadata_difference> out;
  for (const auto& [k, v] : ma) {
    const auto it = mb.find(k);
    if (it == mb.end()) {
      out.push_back({k, v, std::nullopt});
    } else if (it->second != v) {
      out.push_back({k, v, it->second});
    }
  }
  for (const auto& [k, v] : mb) {
    if (!ma.contains(k)) out.push_back({k, std::nullopt, v});
  }
  return out;
}

/// Compares decoded chunks, updating the running differences.
void compare_values(const std::vector<double>& va, const std::vector<double>& vb, std::uint64_t base,
                    const diff_options& options, tensor_difference& d) {
  for (std::size_t i = 0; i < va.size(); ++i) {
    const double x = va[i];
    const double y = vb[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    const double abs_err = std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::infinity() : std::fabs(x - y);
    const double rel_err = y == 0 ? std::numeric_limits<double>::infinity() : abs_err / std::fabs(y);
    if (!(abs_err <= options.atol + options.rtol * std::fabs(y))) {
      if (d.mismatched == 0) {
        d.first_index = base + i;
        d.first_a = x;
        d.first_b = y;
      }
      ++d.mismatched;
    }
    d.max_abs = std::max(d.max_abs, abs_err);
    d.max_rel = std::max(d.max_rel, rel_err);
  }
}

/// Reads both tensors in lockstep, element chunk by element chunk.
class comparer {
 public:
  comparer(const file& a, const file& b, const diff_options& options, std::uint64_t total)
      : a_(a), b_(b), options_(options), total_(total) {}

  status compare(const tensor_info& ta, const tensor_info& tb, tensor_difference& d) {
    const std::uint64_t n = ta.element_count();
    const unsigned bits_a = dtype_bits(ta.type);
    const unsigned bits_b = dtype_bits(tb.type);
    const std::uint64_t per_value = ta.type == dtype::C64 ? 2 : 1;
    for (std::uint64_t done = 0; done < n;) {
      const std::uint64_t k = std::min(n - done, chunk_elements);
      bytes_a_.resize(static_cast<std::size_t>(k * bits_a / 8));
      bytes_b_.resize(static_cast<std::size_t>(k * bits_b / 8));
      if (auto s = a_.read_range(a_.header().data_start() + ta.begin + done * bits_a / 8, bytes_a_); !s) {
        return std::move(s).err().with_path(a_.path());
      }
      if (auto s = b_.read_range(b_.header().data_start() + tb.begin + done * bits_b / 8, bytes_b_); !s) {
        return std::move(s).err().with_path(b_.path());
      }
      // Identical bytes mean identical values: nothing to decode.
      if (ta.type != tb.type || std::memcmp(bytes_a_.data(), bytes_b_.data(), bytes_a_.size()) != 0) {
        if (auto s = decode_values(ta.type, bytes_a_, values_a_); !s) return s;
        if (auto s = decode_values(tb.type, bytes_b_, values_b_); !s) return s;
        compare_values(values_a_, values_b_, done * per_value, options_, d);
      }
      done += k;
      read_ += bytes_a_.size() + bytes_b_.size();
      if (options_.progress && !options_.progress(read_, total_)) {
        return make_error(error_code::cancelled, "cancelled");
      }
    }
    d.values = n * per_value;
    d.compared = true;
    return {};
  }

 private:
  const file& a_;
  const file& b_;
  const diff_options& options_;
  std::uint64_t total_;
  std::uint64_t read_ = 0;
  std::vector<std::byte> bytes_a_, bytes_b_;
  std::vector<double> values_a_, values_b_;
};

/// Values are compared when shapes agree, and complex only against complex.
bool comparable(const tensor_info& a, const tensor_info& b) {
  const bool c64_mismatch = a.type != b.type && (a.type == dtype::C64 || b.type == dtype::C64);
  return std::equal(a.shape.begin(), a.shape.end(), b.shape.begin(), b.shape.end()) && !c64_mismatch;
}

}  // namespace

std::size_t diff_report::differing() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(tensors.begin(), tensors.end(), [](const auto& d) { return d.differs(); }));
}

bool diff_report::equal() const noexcept {
  return metadata.empty() && only_in_a.empty() && only_in_b.empty() && differing() == 0;
}

result<diff_report> diff(const file& a, const file& b, const diff_options& options) {
  if (!(options.rtol >= 0) || !(options.atol >= 0)) {
    return make_error(error_code::invalid_argument, "rtol and atol must be numbers >= 0");
  }
  diff_report report;
  report.metadata = metadata_differences(a, b);
  std::vector<std::pair<const tensor_info*, const tensor_info*>> common;
  std::uint64_t total = 0;
  for (const auto& t : a.tensors()) {
    const auto* other = b.find(t.name);
    if (other == nullptr) {
      report.only_in_a.emplace_back(t.name);
      continue;
    }
    tensor_difference d;
    d.name = std::string(t.name);
    d.type_a = t.type;
    d.type_b = other->type;
    d.shape_a.assign(t.shape.begin(), t.shape.end());
    d.shape_b.assign(other->shape.begin(), other->shape.end());
    d.dtype_counts = !options.ignore_dtype;
    report.tensors.push_back(std::move(d));
    common.emplace_back(&t, other);
    if (comparable(t, *other)) total += t.byte_size() + other->byte_size();
  }
  for (const auto& t : b.tensors()) {
    if (a.find(t.name) == nullptr) report.only_in_b.emplace_back(t.name);
  }
  comparer values(a, b, options, total);
  for (std::size_t i = 0; i < common.size(); ++i) {
    const auto& [ta, tb] = common[i];
    if (!comparable(*ta, *tb)) continue;
    if (auto s = values.compare(*ta, *tb, report.tensors[i]); !s) {
      error e = std::move(s).err();
      if (!e.tensor) e.tensor = std::string(ta->name);
      return e;
    }
  }
  return report;
}

result<diff_report> diff(const std::string& a, const std::string& b, const diff_options& options) {
  auto fa = open_streaming_file(a);
  if (!fa) return std::move(fa).err();
  auto fb = open_streaming_file(b);
  if (!fb) return std::move(fb).err();
  return diff(*fa, *fb, options);
}

}  // namespace safetensors::pipeline
