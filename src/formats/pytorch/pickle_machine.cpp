// SPDX-License-Identifier: Apache-2.0
// The restricted pickle machine: a loop over opcodes that builds pickle_values in an
// arena. Calls (REDUCE, NEWOBJ) go to pickle_calls.cpp, which knows the allowlist.
#include <bit>
#include <charconv>
#include <cstdlib>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "formats/pytorch/pickle_allowlist.h"
#include "formats/pytorch/pickle_code_globals.h"
#include "formats/pytorch/pickle_machine.h"
#include "safetensors/try.h"

namespace safetensors::torch {

struct pickle_document::arena {
  std::deque<pickle_value> values;
};

pickle_document::pickle_document() : arena_(std::make_unique<arena>()) {}
pickle_document::pickle_document(pickle_document&&) noexcept = default;
pickle_document& pickle_document::operator=(pickle_document&&) noexcept = default;
pickle_document::~pickle_document() = default;
std::size_t pickle_document::value_count() const noexcept { return arena_->values.size(); }

std::string_view pickle_verdict_name(pickle_verdict_kind kind) noexcept {
  switch (kind) {
    case pickle_verdict_kind::allowlisted: return "allowlisted";
    case pickle_verdict_kind::inert_objects: return "inert objects";
    case pickle_verdict_kind::runs_code: return "runs code";
  }
  return "unknown";
}

pickle_verdict_kind pickle_verdict::kind() const noexcept {
  if (globals.empty()) return pickle_verdict_kind::allowlisted;
  for (const auto& g : globals) {
    if (g.runs_code) return pickle_verdict_kind::runs_code;
  }
  return pickle_verdict_kind::inert_objects;
}

namespace {

// STACK_GLOBAL's strings are as long as GLOBAL's lines may be (take_line).
constexpr std::size_t max_global_part = 256;

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::optional<std::uint32_t> hex_value(std::string_view digits) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 16);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

// UNICODE (protocol 0): Python's raw-unicode-escape, \uXXXX and \UXXXXXXXX after an odd
// number of backslashes, every other byte a latin-1 code point; as UTF-8.
std::optional<std::string> decode_raw_unicode_escape(std::string_view in) {
  std::string out;
  std::size_t backslashes = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c == '\\' || backslashes % 2 == 0 || (c != 'u' && c != 'U')) {
      backslashes = c == '\\' ? backslashes + 1 : 0;
      append_utf8(out, c);
      continue;
    }
    const std::size_t digits = c == 'u' ? 4 : 8;
    auto cp = i + digits < in.size() ? hex_value(in.substr(i + 1, digits)) : std::nullopt;
    if (!cp || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return std::nullopt;
    out.pop_back();  // the escaping backslash
    append_utf8(out, *cp);
    i += digits;
    backslashes = 0;
  }
  return out;
}

// STRING (protocol 0): a quoted literal with Python's string escapes (codecs.escape_decode).
std::optional<std::string> decode_quoted_string(std::string_view in) {
  if (in.size() < 2 || in.front() != in.back() || (in.front() != '\'' && in.front() != '"')) return std::nullopt;
  in = in.substr(1, in.size() - 2);
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\' || i + 1 == in.size()) {
      if (in[i] == '\\') return std::nullopt;  // a trailing backslash
      out += in[i];
      continue;
    }
    const char e = in[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\':
      case '\'':
      case '"': out += e; break;
      case '\n': break;  // a line continuation
      case 'x': {
        auto v = i + 2 < in.size() ? hex_value(in.substr(i + 1, 2)) : std::nullopt;
        if (!v) return std::nullopt;
        out += static_cast<char>(*v);
        i += 2;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {  // up to three octal digits
          unsigned v = 0;
          std::size_t n = 0;
          for (; n < 3 && i + n < in.size() && in[i + n] >= '0' && in[i + n] <= '7'; ++n)
            v = v * 8 + static_cast<unsigned>(in[i + n] - '0');
          out += static_cast<char>(v & 0xFF);
          i += n - 1;
        } else {
          out += '\\';  // unknown escapes stay as written
          out += e;
        }
    }
  }
  return out;
}

std::string opcode_name(unsigned char op) {
  switch (op) {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'V': return "UNICODE";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'p': return "PUT";
    case 'g': return "GET";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: break;
  }
  static constexpr char hex[] = "0123456789abcdef";
  return std::string("opcode 0x") + hex[op >> 4] + hex[op & 15];
}

}  // namespace

namespace detail {

std::optional<std::vector<std::byte>> decimal_to_le_bytes(std::string_view text, bool allow_long_suffix) {
  if (allow_long_suffix && !text.empty() && text.back() == 'L') text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.size() > 200) return std::nullopt;  // 200 digits: far past any torch value
  std::vector<unsigned> magnitude;                             // base 256, little-endian
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    unsigned carry = static_cast<unsigned>(c - '0');
    for (unsigned& digit : magnitude) {
      const unsigned next = digit * 10 + carry;
      digit = next & 0xFF;
      carry = next >> 8;
    }
    for (; carry != 0; carry >>= 8) magnitude.push_back(carry & 0xFF);
  }
  // Two's complement with one sign bit to spare, so that push_integer reads it back exactly.
  magnitude.push_back(0);
  if (negative) {
    unsigned carry = 1;
    for (unsigned& digit : magnitude) {
      const unsigned next = (~digit & 0xFF) + carry;
      digit = next & 0xFF;
      carry = next >> 8;
    }
  }
  std::vector<std::byte> out;
  for (unsigned digit : magnitude) out.push_back(static_cast<std::byte>(digit));
  // Drop bytes that only repeat the sign.
  while (out.size() > 1) {
    const auto top = std::to_integer<unsigned>(out.back());
    const auto below = std::to_integer<unsigned>(out[out.size() - 2]);
    if ((top == 0 && (below & 0x80) == 0) || (top == 0xFF && (below & 0x80) != 0)) {
      out.pop_back();
    } else {
      break;
    }
  }
  return out;
}

error pickle_machine::fail(error_code code, const std::string& what) const {
  return make_error(code, fmt::format("{} at pickle byte {}: {}", opcode_name(op_), op_offset_, what), op_offset_);
}

pickle_value* pickle_machine::make(pickle_kind kind) {
  auto& values = doc_.arena_->values;
  values.emplace_back();
  values.back().kind = kind;
  return &values.back();
}

status pickle_machine::push(pickle_value* v) {
  if (stack_.size() + marks_.size() >= limits_.max_stack) {
    return fail(error_code::limit_exceeded, fmt::format("stack deeper than {}", limits_.max_stack));
  }
  stack_.push_back(v);
  return {};
}

result<pickle_value*> pickle_machine::pop() {
  if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) return fail(error_code::invalid_format, "stack underflow");
  pickle_value* v = stack_.back();
  stack_.pop_back();
  return v;
}

result<pickle_value*> pickle_machine::top() {
  if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) return fail(error_code::invalid_format, "stack underflow");
  return stack_.back();
}

result<std::vector<pickle_value*>> pickle_machine::pop_mark() {
  if (marks_.empty()) return fail(error_code::invalid_format, "no MARK on the stack");
  std::size_t mark = marks_.back();
  marks_.pop_back();
  std::vector<pickle_value*> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
  stack_.resize(mark);
  return items;
}

result<std::span<const std::byte>> pickle_machine::take(std::uint64_t n) {
  if (n > bytes_.size() - pos_) {
    return fail(error_code::invalid_format,
                fmt::format("needs {} bytes, {} left (truncated pickle)", n, bytes_.size() - pos_));
  }
  auto span = bytes_.subspan(pos_, static_cast<std::size_t>(n));
  pos_ += static_cast<std::size_t>(n);
  return span;
}

template <class T>
result<T> pickle_machine::take_le() {
  auto b = take(sizeof(T));
  if (!b) return std::move(b).err();
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v | std::to_integer<T>((*b)[i]) << (8 * i));
  return v;
}

result<std::string> pickle_machine::take_line(std::size_t max_line) {
  for (std::size_t i = pos_; i < bytes_.size() && i - pos_ <= max_line; ++i) {
    if (bytes_[i] == std::byte{'\n'}) {
      std::string line(reinterpret_cast<const char*>(bytes_.data()) + pos_, i - pos_);
      pos_ = i + 1;
      return line;
    }
  }
  return fail(error_code::invalid_format, fmt::format("line not terminated by a newline within {} bytes", max_line));
}

status pickle_machine::check_container(std::size_t size) const {
  if (size > limits_.max_container) {
    return fail(error_code::limit_exceeded, fmt::format("container of more than {} items", limits_.max_container));
  }
  return {};
}

status pickle_machine::push_text(pickle_kind kind, std::uint64_t length) {
  if (length > limits_.max_string) {
    return fail(error_code::limit_exceeded,
                fmt::format("string of {} bytes, the limit is {}", length, limits_.max_string));
  }
  auto b = take(length);
  if (!b) return std::move(b).err();
  std::string text(reinterpret_cast<const char*>(b->data()), b->size());
  // simdjson's validator directly: the core's detail::first_invalid_utf8 is not public.
  if (kind == pickle_kind::string && !simdjson::validate_utf8(text.data(), text.size()))
    return fail(error_code::invalid_format, "invalid UTF-8");
  pickle_value* v = make(kind);
  v->text = std::move(text);
  return push(v);
}

status pickle_machine::push_integer(std::span<const std::byte> le_bytes) {
  pickle_value* v = make(pickle_kind::integer);
  if (le_bytes.size() > 8) {
    v->kind = pickle_kind::big_integer;
    static constexpr char hex[] = "0123456789abcdef";
    for (auto it = le_bytes.rbegin(); it != le_bytes.rend(); ++it) {
      auto b = std::to_integer<unsigned>(*it);
      v->text += hex[b >> 4];
      v->text += hex[b & 15];
    }
    return push(v);
  }
  std::uint64_t raw = 0;
  for (std::size_t i = 0; i < le_bytes.size(); ++i) raw |= std::to_integer<std::uint64_t>(le_bytes[i]) << (8 * i);
  if (!le_bytes.empty() && le_bytes.size() < 8 && (std::to_integer<unsigned>(le_bytes.back()) & 0x80)) {
    raw |= ~std::uint64_t{0} << (8 * le_bytes.size());  // sign-extend
  }
  v->integer = static_cast<std::int64_t>(raw);
  return push(v);
}

pickle_global_use& pickle_machine::note_foreign_global(const std::string& module, const std::string& name) {
  // Keyed by the exact spelling: ("a.os", "system") and ("a", "os.system") read the same
  // dotted but are judged apart (the second is an attribute walk to os.system).
  auto [it, inserted] =
      foreign_index_.emplace(std::string(module).append(1, '\n').append(name), verdict_.globals.size());
  if (inserted) {
    std::string dotted = module + "." + name;
    foreign_by_name_.emplace(dotted, verdict_.globals.size());  // the first spelling gets the calls
    pickle_global_use use;
    use.name = std::move(dotted);
    use.runs_code = runs_code(module, name);
    use.pickle = pickle_name_;
    use.offset = op_offset_;
    use.opcode = opcode_name(op_);
    if (use.runs_code && !first_code_global_) first_code_global_ = verdict_.globals.size();
    verdict_.globals.push_back(std::move(use));
  }
  pickle_global_use& use = verdict_.globals[it->second];
  ++use.times_named;
  return use;
}

void pickle_machine::note_call(const pickle_value& callee) {
  if (callee.kind != pickle_kind::opaque) return;
  auto it = foreign_by_name_.find(callee.text);
  if (it == foreign_by_name_.end()) return;  // torch.device: allowlisted
  pickle_global_use& use = verdict_.globals[it->second];
  if (use.calls++ == 0) {
    use.first_call_offset = op_offset_;
    use.first_call = opcode_name(op_);
  }
}

error pickle_machine::code_execution_error() const {
  const pickle_global_use& first = verdict_.globals[*first_code_global_];
  std::size_t count = 0;
  for (const auto& g : verdict_.globals) count += g.runs_code ? 1 : 0;
  std::string message =
      fmt::format("refused: this file tries to run code: {} at byte {} of {}", first.name, first.offset, pickle_name_);
  if (count > 1) message += fmt::format(" (and {} more code-execution global{})", count - 1, count > 2 ? "s" : "");
  return make_error(error_code::code_execution, std::move(message), first.offset);
}

status pickle_machine::push_global(const std::string& module, const std::string& name) {
  const auto* entry = detail::find_allowed_global(module, name);
  if (entry == nullptr) {
    note_foreign_global(module, name);
    // Never imported: an inert stand-in that calls and state updates leave inert.
    pickle_value* v = make(pickle_kind::opaque);
    v->text = module + "." + name;
    return push(v);
  }
  pickle_value* v = make(pickle_kind::global);
  v->integer = static_cast<std::int64_t>(detail::allowed_global_index(*entry));
  v->text = module + "." + name;
  return push(v);
}

status pickle_machine::memo_put(std::uint64_t index) {
  auto v = top();
  if (!v) return std::move(v).err();
  if (!memo_.contains(index) && memo_.size() >= limits_.max_memo) {
    return fail(error_code::limit_exceeded, fmt::format("more than {} memo entries", limits_.max_memo));
  }
  memo_[index] = *v;
  return {};
}

status pickle_machine::memo_get(std::uint64_t index) {
  auto it = memo_.find(index);
  if (it == memo_.end()) return fail(error_code::invalid_format, fmt::format("memo entry {} not set", index));
  return push(it->second);
}

status pickle_machine::append(pickle_value* target, std::span<pickle_value* const> items) {
  if (target->kind == pickle_kind::opaque) return {};  // a list-like object of unknown type: its items are dropped
  if (target->kind == pickle_kind::set) {
    if (op_ != 0x90) return fail(error_code::unsafe_content, "target is a set, not a list");
  } else if (target->kind != pickle_kind::list || op_ == 0x90) {
    return fail(error_code::unsafe_content, "target is not a " + std::string(op_ == 0x90 ? "set" : "list"));
  }
  if (auto ok = check_container(target->items.size() + items.size()); !ok) return ok;
  target->items.insert(target->items.end(), items.begin(), items.end());
  return {};
}

status pickle_machine::set_items(pickle_value* target, std::span<pickle_value* const> items) {
  if (target->kind == pickle_kind::opaque) return {};  // a dict-like object of unknown type: its items are dropped
  if (target->kind != pickle_kind::dict) return fail(error_code::unsafe_content, "target is not a dict");
  if (items.size() % 2 != 0) return fail(error_code::invalid_format, "odd number of items for key/value pairs");
  if (auto ok = check_container(target->items.size() / 2 + items.size() / 2); !ok) return ok;
  auto& slots = dict_slots_[target];
  for (std::size_t i = 0; i < items.size(); i += 2) {
    // A repeated key replaces the earlier value, as in Python (str and int keys compared).
    std::string key;  // kind tag + text: "s" for str, "i" for int
    if (items[i]->kind == pickle_kind::string) key.append(1, 's').append(items[i]->text);
    if (items[i]->kind == pickle_kind::integer) key.append(1, 'i').append(std::to_string(items[i]->integer));
    if (!key.empty()) {
      auto [it, inserted] = slots.emplace(std::move(key), target->items.size() + 1);
      if (!inserted) {
        target->items[it->second] = items[i + 1];
        continue;
      }
    }
    target->items.push_back(items[i]);
    target->items.push_back(items[i + 1]);
  }
  return {};
}

status pickle_machine::make_sequence(pickle_kind kind, std::vector<pickle_value*> items) {
  if (auto ok = check_container(items.size()); !ok) return ok;
  pickle_value* v = make(kind);
  v->items.assign(items.begin(), items.end());
  return push(v);
}

status pickle_machine::binpersid() {
  auto pid = pop();
  if (!pid) return std::move(pid).err();
  const pickle_value& t = **pid;
  auto is = [&](std::size_t i, pickle_kind k) { return t.items.size() > i && t.items[i]->kind == k; };
  if (t.kind != pickle_kind::tuple || (t.items.size() != 5 && t.items.size() != 6) || !is(0, pickle_kind::string) ||
      t.items[0]->text != "storage") {
    return fail(error_code::unsafe_content, "persistent id is not a ('storage', class, key, location, numel) tuple");
  }
  if (!is(1, pickle_kind::global) || detail::allowed_global_at(static_cast<std::size_t>(t.items[1]->integer)).role !=
                                         detail::global_role::storage_class) {
    return fail(error_code::unsafe_content, "persistent id names no storage class");
  }
  if (!is(2, pickle_kind::string) || !is(3, pickle_kind::string) || !is(4, pickle_kind::integer) ||
      t.items[4]->integer < 0) {
    return fail(error_code::invalid_format, "persistent id needs a string key, a string location and a count");
  }
  if (t.items.size() == 6 && t.items[5]->kind != pickle_kind::none) {
    return fail(error_code::unsupported, "storage views (legacy view_metadata) are not supported");
  }
  const auto& cls = detail::allowed_global_at(static_cast<std::size_t>(t.items[1]->integer));
  const std::string& key = t.items[2]->text;
  auto count = static_cast<std::uint64_t>(t.items[4]->integer);
  std::size_t index = doc_.storages_.size();
  if (auto it = storage_by_key_.find(key); it != storage_by_key_.end()) {
    index = it->second;
    const auto& s = doc_.storages_[index];
    if (s.class_name != cls.name || s.element_count != count) {
      return fail(error_code::invalid_format, "storage '" + key + "' is described twice differently");
    }
  } else {
    doc_.storages_.push_back({key, std::string(cls.name), cls.type, count, cls.element_bytes, t.items[3]->text});
    storage_by_key_.emplace(key, index);
  }
  pickle_value* v = make(pickle_kind::storage);
  v->integer = static_cast<std::int64_t>(index);
  v->text = key;
  return push(v);
}

result<pickle_document> pickle_machine::run() {
  auto doc = run_opcodes();
  // A code-execution global anywhere refuses the file, whatever else went wrong after it.
  if (first_code_global_ && (doc.ok() || doc.err().code != error_code::code_execution)) return code_execution_error();
  if (doc) doc->verdict_ = verdict_;
  return doc;
}

result<pickle_document> pickle_machine::run_opcodes() {
  auto u8 = [&]() -> result<std::uint64_t> {
    auto v = take_le<std::uint8_t>();
    if (!v) return std::move(v).err();
    return *v;
  };
  auto u32 = [&]() -> result<std::uint64_t> {
    auto v = take_le<std::uint32_t>();
    if (!v) return std::move(v).err();
    return *v;
  };
  auto u64 = [&]() -> result<std::uint64_t> {
    auto v = take_le<std::uint64_t>();
    if (!v) return std::move(v).err();
    return *v;
  };

  while (true) {
    if (doc_.arena_->values.size() >= limits_.max_values) {
      return fail(error_code::limit_exceeded, fmt::format("more than {} values", limits_.max_values));
    }
    op_offset_ = pos_;
    if (pos_ >= bytes_.size()) {
      op_ = '.';
      return fail(error_code::invalid_format, "pickle ends before STOP (truncated)");
    }
    op_ = std::to_integer<unsigned char>(bytes_[pos_++]);
    switch (op_) {
      case 0x80: {  // PROTO
        SAFETENSORS_TRY_ASSIGN(proto, u8());
        if (proto > 5) return fail(error_code::invalid_format, fmt::format("protocol {} is unknown", proto));
        break;
      }
      case 0x95: SAFETENSORS_TRY(u64()); break;  // FRAME: a length hint only
      case '.': {
        SAFETENSORS_TRY_ASSIGN(root, pop());
        doc_.root_ = root;
        doc_.end_ = pos_;
        return std::move(doc_);
      }
      case '(':
        if (stack_.size() + marks_.size() >= limits_.max_stack) {
          return fail(error_code::limit_exceeded, fmt::format("stack deeper than {}", limits_.max_stack));
        }
        marks_.push_back(stack_.size());
        break;
      case '0': SAFETENSORS_TRY(pop()); break;
      case '1': SAFETENSORS_TRY(pop_mark()); break;
      case '2': {
        SAFETENSORS_TRY_ASSIGN(v, top());
        SAFETENSORS_TRY(push(v));
        break;
      }
      case 'N': SAFETENSORS_TRY(push(make(pickle_kind::none))); break;
      case 0x88:
      case 0x89: {
        pickle_value* v = make(pickle_kind::boolean);
        v->integer = op_ == 0x88;
        SAFETENSORS_TRY(push(v));
        break;
      }
      case 'J': {
        SAFETENSORS_TRY_ASSIGN(b, take(4));
        SAFETENSORS_TRY(push_integer(b));
        break;
      }
      case 'K': {
        SAFETENSORS_TRY_ASSIGN(b, take(1));
        SAFETENSORS_TRY(push_integer(b));
        SAFETENSORS_TRY(zero_extend());
        break;
      }
      case 'M': {
        SAFETENSORS_TRY_ASSIGN(b, take(2));
        SAFETENSORS_TRY(push_integer(b));
        SAFETENSORS_TRY(zero_extend());
        break;
      }
      case 0x8a:
      case 0x8b: {
        SAFETENSORS_TRY_ASSIGN(n, op_ == 0x8a ? u8() : u32());
        if (n > limits_.max_string) return fail(error_code::limit_exceeded, fmt::format("integer of {} bytes", n));
        SAFETENSORS_TRY_ASSIGN(b, take(n));
        SAFETENSORS_TRY(push_integer(b));
        break;
      }
      case 'I':
      case 'L': {
        SAFETENSORS_TRY_ASSIGN(line, take_line());
        SAFETENSORS_TRY(push_decimal(line));
        break;
      }
      case 'F': {
        SAFETENSORS_TRY_ASSIGN(line, take_line());
        SAFETENSORS_TRY(push_float_text(line));
        break;
      }
      case 'S':
      case 'V': {
        SAFETENSORS_TRY_ASSIGN(line, take_line(limits_.max_string));
        SAFETENSORS_TRY(push_protocol0_text(line));
        break;
      }
      case 'p': {
        SAFETENSORS_TRY_ASSIGN(line, take_line());
        SAFETENSORS_TRY_ASSIGN(i, memo_index(line));
        SAFETENSORS_TRY(memo_put(i));
        break;
      }
      case 'g': {
        SAFETENSORS_TRY_ASSIGN(line, take_line());
        SAFETENSORS_TRY_ASSIGN(i, memo_index(line));
        SAFETENSORS_TRY(memo_get(i));
        break;
      }
      case 'G': {
        SAFETENSORS_TRY_ASSIGN(b, take(8));
        std::uint64_t raw = 0;
        for (auto byte : b) raw = (raw << 8) | std::to_integer<std::uint64_t>(byte);  // big-endian
        pickle_value* v = make(pickle_kind::floating);
        v->floating = std::bit_cast<double>(raw);
        SAFETENSORS_TRY(push(v));
        break;
      }
      case 'X': {
        SAFETENSORS_TRY_ASSIGN(n, u32());
        SAFETENSORS_TRY(push_text(pickle_kind::string, n));
        break;
      }
      case 0x8c: {
        SAFETENSORS_TRY_ASSIGN(n, u8());
        SAFETENSORS_TRY(push_text(pickle_kind::string, n));
        break;
      }
      case 0x8d: {
        SAFETENSORS_TRY_ASSIGN(n, u64());
        SAFETENSORS_TRY(push_text(pickle_kind::string, n));
        break;
      }
      case 'U':
      case 'C': {
        SAFETENSORS_TRY_ASSIGN(n, u8());
        SAFETENSORS_TRY(push_text(pickle_kind::bytes, n));
        break;
      }
      case 'T':
      case 'B': {
        SAFETENSORS_TRY_ASSIGN(n, u32());
        SAFETENSORS_TRY(push_text(pickle_kind::bytes, n));
        break;
      }
      case 0x8e:
      case 0x96: {
        SAFETENSORS_TRY_ASSIGN(n, u64());
        SAFETENSORS_TRY(push_text(pickle_kind::bytes, n));
        break;
      }
      case '}': SAFETENSORS_TRY(push(make(pickle_kind::dict))); break;
      case ']': SAFETENSORS_TRY(push(make(pickle_kind::list))); break;
      case ')': SAFETENSORS_TRY(push(make(pickle_kind::tuple))); break;
      case 0x8f: SAFETENSORS_TRY(push(make(pickle_kind::set))); break;
      case 't': {
        SAFETENSORS_TRY_ASSIGN(items, pop_mark());
        SAFETENSORS_TRY(make_sequence(pickle_kind::tuple, std::move(items)));
        break;
      }
      case 'l': {
        SAFETENSORS_TRY_ASSIGN(items, pop_mark());
        SAFETENSORS_TRY(make_sequence(pickle_kind::list, std::move(items)));
        break;
      }
      case 0x91: {
        SAFETENSORS_TRY_ASSIGN(items, pop_mark());
        SAFETENSORS_TRY(make_sequence(pickle_kind::set, std::move(items)));
        break;
      }
      case 'd': {
        SAFETENSORS_TRY_ASSIGN(items, pop_mark());
        pickle_value* d = make(pickle_kind::dict);
        SAFETENSORS_TRY(set_items(d, items));
        SAFETENSORS_TRY(push(d));
        break;
      }
      case 0x85:
      case 0x86:
      case 0x87: {
        std::vector<pickle_value*> items(op_ - 0x84u);
        for (auto it = items.rbegin(); it != items.rend(); ++it) {
          SAFETENSORS_TRY_ASSIGN(v, pop());
          *it = v;
        }
        SAFETENSORS_TRY(make_sequence(pickle_kind::tuple, std::move(items)));
        break;
      }
      case 'a': {
        SAFETENSORS_TRY_ASSIGN(v, pop());
        SAFETENSORS_TRY_ASSIGN(target, top());
        SAFETENSORS_TRY(append(target, std::span<pickle_value* const>(&v, 1)));
        break;
      }
      case 'e':
      case 0x90: {
        SAFETENSORS_TRY_ASSIGN(items, pop_mark());
        SAFETENSORS_TRY_ASSIGN(target, top());
        SAFETENSORS_TRY(append(target, items));
        break;
      }
      case 's': {
        SAFETENSORS_TRY_ASSIGN(value, pop());
        SAFETENSORS_TRY_ASSIGN(key, pop());
        SAFETENSORS_TRY_ASSIGN(target, top());
        pickle_value* pair[] = {key, value};
        SAFETENSORS_TRY(set_items(target, pair));
        break;
      }
      case 'u': {
        SAFETENSORS_TRY_ASSIGN(items, pop_mark());
        SAFETENSORS_TRY_ASSIGN(target, top());
        SAFETENSORS_TRY(set_items(target, items));
        break;
      }
      case 'q': {
        SAFETENSORS_TRY_ASSIGN(i, u8());
        SAFETENSORS_TRY(memo_put(i));
        break;
      }
      case 'r': {
        SAFETENSORS_TRY_ASSIGN(i, u32());
        SAFETENSORS_TRY(memo_put(i));
        break;
      }
      case 0x94: SAFETENSORS_TRY(memo_put(memo_.size())); break;
      case 'h': {
        SAFETENSORS_TRY_ASSIGN(i, u8());
        SAFETENSORS_TRY(memo_get(i));
        break;
      }
      case 'j': {
        SAFETENSORS_TRY_ASSIGN(i, u32());
        SAFETENSORS_TRY(memo_get(i));
        break;
      }
      case 'c': {
        SAFETENSORS_TRY_ASSIGN(module, take_line());
        SAFETENSORS_TRY_ASSIGN(name, take_line());
        SAFETENSORS_TRY(push_global(module, name));
        break;
      }
      case 0x93: {
        SAFETENSORS_TRY_ASSIGN(name, pop());
        SAFETENSORS_TRY_ASSIGN(module, pop());
        if (module->kind != pickle_kind::string || name->kind != pickle_kind::string) {
          return fail(error_code::invalid_format, "module and name must be strings");
        }
        if (module->text.size() > max_global_part || name->text.size() > max_global_part) {
          return fail(error_code::invalid_format,
                      fmt::format("module or global name longer than {} bytes", max_global_part));
        }
        SAFETENSORS_TRY(push_global(module->text, name->text));
        break;
      }
      case 'i': {
        SAFETENSORS_TRY_ASSIGN(module, take_line());
        SAFETENSORS_TRY_ASSIGN(name, take_line());
        if (detail::find_allowed_global(module, name) == nullptr) {
          pickle_global_use& use = note_foreign_global(module, name);
          if (use.calls++ == 0) {
            use.first_call_offset = op_offset_;
            use.first_call = opcode_name(op_);
          }
        }
        return fail(error_code::unsafe_content, "instance creation ('" + module + "." + name + "') is not allowed");
      }
      case 'o': {
        if (!marks_.empty() && marks_.back() < stack_.size()) note_call(*stack_[marks_.back()]);  // the class
        return fail(error_code::unsafe_content, "instance creation is not allowed");
      }
      case 0x92: {
        SAFETENSORS_TRY(pop());  // keyword arguments
        SAFETENSORS_TRY_ASSIGN(args, pop());
        SAFETENSORS_TRY_ASSIGN(cls, pop());
        if (cls->kind != pickle_kind::opaque) {
          return fail(error_code::unsafe_content, "instance creation with keyword arguments is not allowed");
        }
        SAFETENSORS_TRY_ASSIGN(v, instantiate(*cls, *args));
        SAFETENSORS_TRY(push(v));
        break;
      }
      case 0x82:
      case 0x83:
      case 0x84: return fail(error_code::unsafe_content, "the extension registry is not allowed");
      case 'P': return fail(error_code::unsafe_content, "text persistent ids are not allowed");
      case 'Q': SAFETENSORS_TRY(binpersid()); break;
      case 'R': {
        SAFETENSORS_TRY_ASSIGN(args, pop());
        SAFETENSORS_TRY_ASSIGN(callable, pop());
        SAFETENSORS_TRY_ASSIGN(v, call(*callable, *args));
        SAFETENSORS_TRY(push(v));
        break;
      }
      case 0x81: {
        SAFETENSORS_TRY_ASSIGN(args, pop());
        SAFETENSORS_TRY_ASSIGN(cls, pop());
        SAFETENSORS_TRY_ASSIGN(v, instantiate(*cls, *args));
        SAFETENSORS_TRY(push(v));
        break;
      }
      case 'b': {
        SAFETENSORS_TRY_ASSIGN(state, pop());
        SAFETENSORS_TRY_ASSIGN(target, top());
        SAFETENSORS_TRY(build(*target, *state));
        break;
      }
      default: return fail(error_code::invalid_format, "unsupported or unknown opcode");
    }
  }
}

status pickle_machine::push_decimal(const std::string& line) {
  // INT: "01"/"00" are True/False (protocols 0-1); INT and LONG ("123L") are decimal.
  if (op_ == 'I' && (line == "01" || line == "00")) {
    pickle_value* v = make(pickle_kind::boolean);
    v->integer = line == "01";
    return push(v);
  }
  auto bytes = decimal_to_le_bytes(line, op_ == 'L');
  if (!bytes) return fail(error_code::invalid_format, fmt::format("'{}' is not a decimal integer", line.substr(0, 40)));
  return push_integer(*bytes);
}

status pickle_machine::push_protocol0_text(const std::string& line) {
  auto text = op_ == 'V' ? decode_raw_unicode_escape(line) : decode_quoted_string(line);
  if (!text) return fail(error_code::invalid_format, op_ == 'V' ? "bad \\u escape" : "not a quoted string literal");
  pickle_value* v = make(pickle_kind::string);
  if (!simdjson::validate_utf8(text->data(), text->size())) v->kind = pickle_kind::bytes;  // a Python 2 byte string
  v->text = std::move(*text);
  return push(v);
}

status pickle_machine::push_float_text(const std::string& line) {
  const char* begin = line.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (line.empty() || end != begin + line.size()) return fail(error_code::invalid_format, "not a float");
  pickle_value* v = make(pickle_kind::floating);
  v->floating = value;
  return push(v);
}

result<std::uint64_t> pickle_machine::memo_index(const std::string& line) const {
  std::uint64_t index = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), index);
  if (ec != std::errc{} || end != line.data() + line.size() || line.empty()) {
    return fail(error_code::invalid_format, "memo index is not a decimal number");
  }
  return index;
}

status pickle_machine::zero_extend() {
  // BININT1/BININT2 are unsigned; push_integer sign-extended them.
  pickle_value* v = stack_.back();
  v->integer &= op_ == 'K' ? 0xff : 0xffff;
  return {};
}

}  // namespace detail

namespace detail {

result<pickle_document> unpickle_into(std::span<const std::byte> bytes, const pickle_limits& limits,
                                      std::string pickle_name, pickle_verdict& verdict) {
  pickle_machine machine(bytes, limits, std::move(pickle_name));
  auto doc = machine.run();
  verdict.globals.insert(verdict.globals.end(), machine.verdict().globals.begin(), machine.verdict().globals.end());
  return doc;
}

}  // namespace detail

result<pickle_document> unpickle(std::span<const std::byte> bytes, const pickle_limits& limits) {
  return detail::pickle_machine(bytes, limits, "the pickle").run();
}

}  // namespace safetensors::torch
