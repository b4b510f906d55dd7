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
#include <utility>
#include <vector>

#include "safetensors/formats/pickle.h"

namespace safetensors::torch::detail {

/// The minimal little-endian two's complement bytes of a decimal integer ("-12", and with
/// `allow_long_suffix` also "12L"), as LONG1 would carry it; nullopt when not a number.
[[nodiscard]] std::optional<std::vector<std::byte>> decimal_to_le_bytes(std::string_view text, bool allow_long_suffix);

/// Unpickles `bytes` (the pickle called `pickle_name` in messages: "archive/data.pkl") and
/// appends the globals it names outside the allowlist to `verdict`, also when it fails, so
/// that a refused file still says what it tried.
[[nodiscard]] result<pickle_document> unpickle_into(std::span<const std::byte> bytes, const pickle_limits& limits,
                                                    std::string pickle_name, pickle_verdict& verdict);

class pickle_machine {
 public:
  pickle_machine(std::span<const std::byte> bytes, const pickle_limits& limits, std::string pickle_name)
      : bytes_(bytes), limits_(limits), pickle_name_(std::move(pickle_name)) {}
  /// Once: the document, or the first error (CodeExecution wins over any other).
  [[nodiscard]] result<pickle_document> run();
  /// What the stream named outside the allowlist, as far as it was read.
  [[nodiscard]] const pickle_verdict& verdict() const noexcept { return verdict_; }

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
  // A text line of at most `max_line` bytes (names: 256), without its newline.
  [[nodiscard]] result<std::string> take_line(std::size_t max_line = 256);
  // STRING and UNICODE of protocol 0: a quoted, escaped literal and raw-unicode-escape text.
  [[nodiscard]] status push_protocol0_text(const std::string& line);

  [[nodiscard]] status check_container(std::size_t size) const;
  [[nodiscard]] status push_text(pickle_kind kind, std::uint64_t length);
  [[nodiscard]] status push_integer(std::span<const std::byte> le_bytes);
  [[nodiscard]] status zero_extend();
  [[nodiscard]] status push_decimal(const std::string& line);
  [[nodiscard]] status push_float_text(const std::string& line);
  [[nodiscard]] result<std::uint64_t> memo_index(const std::string& line) const;
  [[nodiscard]] result<pickle_document> run_opcodes();
  [[nodiscard]] status push_global(const std::string& module, const std::string& name);
  // Records a global outside the allowlist as named by the current opcode; its verdict entry.
  pickle_global_use& note_foreign_global(const std::string& module, const std::string& name);
  // Records a call (the current opcode) on an opaque value made from a foreign global.
  void note_call(const pickle_value& callee);
  [[nodiscard]] error code_execution_error() const;
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
  std::string pickle_name_;
  pickle_verdict verdict_;
  std::unordered_map<std::string, std::size_t> foreign_index_;    // "module\nname" -> verdict_.globals index
  std::unordered_map<std::string, std::size_t> foreign_by_name_;  // "module.name" (opaque text) -> the same
  std::optional<std::size_t> first_code_global_;                  // its index in verdict_.globals
};

}  // namespace safetensors::torch::detail
