// SPDX-License-Identifier: Apache-2.0
// Phase 2 of writing: serialize to memory, write atomically, or stream chunks.
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "safetensors/region_file.h"
#include "safetensors/writer.h"

namespace safetensors {
namespace {

result<write_plan> plan_for(std::span<const tensor_data> tensors, const write_options& options) {
  std::vector<tensor_spec> specs;
  specs.reserve(tensors.size());
  for (const tensor_data& t : tensors) specs.push_back({t.name, t.type, t.shape});
  auto plan = write_plan::make(std::move(specs), options);
  if (!plan) return plan;
  // Every length is checked before a byte is written.
  for (const tensor_data& t : tensors) {
    const planned_tensor* p = plan->find(t.name);
    if (t.data.size() != p->byte_size()) {
      return make_error(error_code::invalid_argument,
                        fmt::format("tensor '{}' has {} bytes of data, its dtype and shape need {}", t.name,
                                    t.data.size(), p->byte_size()),
                        std::nullopt, t.name);
    }
  }
  return plan;
}

}  // namespace

result<std::vector<std::byte>> serialize(std::span<const tensor_data> tensors, const write_options& options) {
  auto plan = plan_for(tensors, options);
  if (!plan) return std::move(plan).err();
  std::vector<std::byte> out(plan->file_size());
  auto header = plan->header_bytes();
  std::memcpy(out.data(), header.data(), header.size());
  for (const tensor_data& t : tensors) {
    const planned_tensor* p = plan->find(t.name);
    if (!t.data.empty()) std::memcpy(out.data() + plan->data_start() + p->begin, t.data.data(), t.data.size());
  }
  return out;
}

status write_file(const std::string& path, std::span<const tensor_data> tensors, const write_options& options) {
  auto plan = plan_for(tensors, options);
  if (!plan) {
    return std::move(plan).err().with_path(path);
  }
  auto writer = stream_writer::create(path, std::move(plan).value());
  if (!writer) return std::move(writer).err();
  // In file order, so the temporary grows by appending: filling holes is much slower.
  std::unordered_map<std::string_view, std::span<const std::byte>> data_of;
  for (const tensor_data& t : tensors) data_of.emplace(t.name, t.data);
  for (const planned_tensor& p : writer->plan().tensors()) {
    if (auto s = writer->append(p.name, data_of.at(p.name)); !s) return s;
  }
  return writer->commit();
}

struct stream_writer::state {
  write_plan plan;
  region_file out;
};

stream_writer::stream_writer(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
stream_writer::stream_writer(stream_writer&&) noexcept = default;
stream_writer& stream_writer::operator=(stream_writer&&) noexcept = default;
stream_writer::~stream_writer() = default;  // the region file removes an uncommitted temporary

const write_plan& stream_writer::plan() const noexcept { return state_->plan; }

result<stream_writer> stream_writer::create(const std::string& path, write_plan plan) {
  std::vector<region_file::region> regions;
  regions.reserve(plan.tensors().size());
  for (const planned_tensor& t : plan.tensors()) regions.push_back({plan.data_start() + t.begin, t.byte_size()});
  auto out = region_file::create(path, plan.file_size(), plan.header_bytes(), std::move(regions));
  if (!out) return std::move(out).err();
  return stream_writer(std::make_unique<state>(state{std::move(plan), std::move(out).value()}));
}

status stream_writer::append(std::string_view name, std::span<const std::byte> chunk) {
  const planned_tensor* t = state_->plan.find(name);
  if (t == nullptr) {
    return make_error(error_code::tensor_not_found, fmt::format("tensor '{}' is not in the plan", name), std::nullopt,
                      std::string(name));
  }
  return state_->out.append(static_cast<std::size_t>(t - state_->plan.tensors().data()), name, chunk);
}

status stream_writer::commit() {
  return state_->out.commit([&](std::size_t i) -> std::string_view { return state_->plan.tensors()[i].name; });
}

void stream_writer::abort() noexcept { state_->out.abort(); }

}  // namespace safetensors
