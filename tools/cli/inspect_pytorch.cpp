// SPDX-License-Identifier: Apache-2.0
// `inspect` of a PyTorch checkpoint (.pt/.bin, zip or legacy). Nothing in the input is
// executed: the library's restricted unpickler only describes tensors.
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "count_text.h"
#include "foreign_formats.h"
#include "report.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/json_text.h"

namespace st_cli {
namespace {
namespace st = safetensors;
}  // namespace

st::result<file_listing> list_pytorch(const std::string& path) {
  auto c = st::torch::checkpoint::open(path);
  if (!c) return safetensors::error(c.err()).with_path(path);
  std::map<std::size_t, std::size_t> users;  // storage -> tensors viewing it
  for (const auto& t : c->tensors()) ++users[t.storage];
  file_listing out;
  out.format = fmt::format("PyTorch checkpoint ({} container, {}-endian)",
                           c->container() == st::torch::container_kind::zip ? "zip" : "legacy",
                           c->big_endian() ? "big" : "little");
  out.extra_title = "notes";
  for (const auto& t : c->tensors()) {
    std::vector<std::string> notes;
    if (!t.contiguous()) notes.emplace_back("strided view");
    if (users[t.storage] > 1) notes.push_back(fmt::format("shares storage {}", c->storages()[t.storage].key));
    const std::uint64_t elements =
        std::accumulate(t.shape.begin(), t.shape.end(), std::uint64_t{1}, std::multiplies<>());
    out.rows.push_back(
        {{t.name, std::string(st::dtype_name(t.type)), t.shape, st::byte_size(t.type, t.shape).bytes, elements},
         fmt::format("{}", fmt::join(notes, ", "))});
  }
  for (const auto& s : c->skipped()) out.notes.push_back(fmt::format("skipped {}: {}", s.name, s.reason));
  return out;
}

run_result inspect_pytorch(const std::string& path, bool json) {
  if (!json) {
    auto listing = list_pytorch(path);
    if (!listing) return std::move(listing).err();
    print_listing(path, *listing);
    return exit_ok;
  }
  auto c = st::torch::checkpoint::open(path);
  if (!c) return safetensors::error(c.err()).with_path(path);
  const char* container = c->container() == st::torch::container_kind::zip ? "zip" : "legacy";
  auto shape_text = [](const std::vector<std::uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); };
  std::string out =
      fmt::format(R"({{"format":"pytorch","container":"{}","big_endian":{},"tensors":[)", container, c->big_endian());
  for (std::size_t i = 0; i < c->tensors().size(); ++i) {
    const auto& t = c->tensors()[i];
    out += fmt::format(R"({}{{"name":{},"dtype":"{}","shape":{},"storage":{},"storage_offset":{},"contiguous":{}}})",
                       i ? "," : "", st::json_quote(t.name), st::dtype_name(t.type), shape_text(t.shape),
                       st::json_quote(c->storages()[t.storage].key), t.storage_offset, t.contiguous());
  }
  out += R"(],"skipped":[)";
  for (std::size_t i = 0; i < c->skipped().size(); ++i) {
    const auto& s = c->skipped()[i];
    out +=
        fmt::format(R"({}{{"name":{},"reason":{}}})", i ? "," : "", st::json_quote(s.name), st::json_quote(s.reason));
  }
  fmt::print("{}]}}\n", out);
  return exit_ok;
}

}  // namespace st_cli
