// SPDX-License-Identifier: Apache-2.0
// Internal: the state of one run of the restricted pickle machine (pickle.h). The opcode
// loop is in pickle_machine.cpp; calls of allowlisted globals in pickle_calls.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "safetensors/formats/pickle.h"

namespace safetensors::torch::detail {

/// The minimal little-endian two's complement bytes of a decimal integer ("-12", and with
/// `allow_long_suffix` also "12L"), as LONG1 would carry it; nullopt when not a number.
[[nodiscard]] std::optional<std::vector<std::byte>> decimal_to_le_bytes(std::string_view text, bool allow_long_suffix);

class pickle_machine {
 public:
  pickle_machine(std::span<const std::byte> bytes, const pickle_limits& limits) : bytes_(bytes), limits_(limits) {}
  [[nodiscard]] result<pickle_document> run() &&;

 private:
  // An error naming the current opcode and its offset in the pickle.
  [[nodiscard]] error fail(error_code code, const std::string& what) const;
  [[nodiscard]] pickle_value* make(pickle_kind kind);

  [[nodiscard]] status push(pickle_value* v);
  [[nodiscard]] result<pickle_value*> pop();
  [[nodiscard]] result<pickle_value*> top();
  [[nodiscard]] result<std::vector<pickle_value*>> pop_mark();

  [[nodiscard]] result<std::span<const std::byte>> take(std::uint64_t n);
  template <class T>
  [[nodiscard]] result<T> take_le();
  [[nodiscard]] result<std::string> take_line();

  [[nodiscard]] status check_container(std::size_t size) const;
  [[nodiscard]] status push_text(pickle_kind kind, std::uint64_t length);
  [[nodiscard]] status push_integer(std::span<const std::byte> le_bytes);
  [[nodiscard]] status zero_extend();
  [[nodiscard]] status push_decimal(const std::string& line);
  [[nodiscard]] status push_float_text(const std::string& line);
  [[nodiscard]] result<std::uint64_t> memo_index(const std::string& line) const;
  [[nodiscard]] status push_global(const std::string& module, const std::string& name);
  [[nodiscard]] status memo_put(std::uint64_t index);
  [[nodiscard]] status memo_get(std::uint64_t index);
  [[nodiscard]] status append(pickle_value* target, std::span<pickle_value* const> items);
  [[nodiscard]] status set_items(pickle_value* target, std::span<pickle_value* const> items);
  [[nodiscard]] status make_sequence(pickle_kind kind, std::vector<pickle_value*> items);
  [[nodiscard]] status binpersid();

  // pickle_calls.cpp: REDUCE, NEWOBJ and BUILD on allowlisted globals only.
  [[nodiscard]] result<pickle_value*> call(const pickle_value& callable, const pickle_value& args);
  [[nodiscard]] result<pickle_value*> instantiate(const pickle_value& cls, const pickle_value& args);
  [[nodiscard]] status build(const pickle_value& target, const pickle_value& state);
  [[nodiscard]] pickle_value* opaque_result(const pickle_value& origin);
  [[nodiscard]] result<pickle_value*> rebuild_tensor(int version, std::span<const pickle_value* const> args);

  std::span<const std::byte> bytes_;
  pickle_limits limits_;
  std::size_t pos_ = 0;
  std::size_t op_offset_ = 0;
  unsigned char op_ = 0;
  std::vector<pickle_value*> stack_;
  std::vector<std::size_t> marks_;  // stack sizes at each MARK
  std::unordered_map<std::uint64_t, pickle_value*> memo_;
  std::unordered_map<std::string, std::size_t> storage_by_key_;
  // Per dict: str/int key -> index of its value in items, so SETITEMS stays linear.
  std::unordered_map<const pickle_value*, std::unordered_map<std::string, std::size_t>> dict_slots_;
  pickle_document doc_;
};

}  // namespace safetensors::torch::detail
