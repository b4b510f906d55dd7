// SPDX-License-Identifier: Apache-2.0
// Error code names and the one-line rendering used by every tool.
#include "safetensors/error.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace safetensors {

std::string_view error_code_name(error_code code) noexcept {
  switch (code) {
    case error_code::header_too_small: return "HeaderTooSmall";
    case error_code::header_too_large: return "HeaderTooLarge";
    case error_code::invalid_header_length: return "InvalidHeaderLength";
    case error_code::invalid_header: return "InvalidHeader";
    case error_code::invalid_header_deserialization: return "InvalidHeaderDeserialization";
    case error_code::duplicate_key: return "DuplicateKey";
    case error_code::invalid_offset: return "InvalidOffset";
    case error_code::validation_overflow: return "ValidationOverflow";
    case error_code::misaligned_slice: return "MisalignedSlice";
    case error_code::tensor_invalid_info: return "TensorInvalidInfo";
    case error_code::metadata_incomplete_buffer: return "MetadataIncompleteBuffer";
    case error_code::limit_exceeded: return "LimitExceeded";
    case error_code::unknown_field: return "UnknownField";
    case error_code::tensor_not_found: return "TensorNotFound";
    case error_code::invalid_argument: return "InvalidArgument";
    case error_code::io: return "IoError";
    case error_code::invalid_slice: return "InvalidSlice";
    case error_code::invalid_index: return "InvalidIndex";
    case error_code::unsafe_path: return "UnsafePath";
    case error_code::shard_mismatch: return "ShardMismatch";
    case error_code::invalid_format: return "InvalidFormat";
    case error_code::unsupported: return "Unsupported";
    case error_code::unsafe_content: return "UnsafeContent";
    case error_code::cancelled: return "Cancelled";
    case error_code::code_execution: return "CodeExecution";
  }
  return "Unknown";
}

void detail::value_of_failed_result(const error& e) noexcept {
  std::fputs(fmt::format("safetensors: value() of a failed result: {}\n", e.to_string()).c_str(), stderr);
  std::abort();
}

void detail::err_of_successful_result() noexcept {
  std::fputs("safetensors: err() of a successful result\n", stderr);
  std::abort();
}

error error::with_path(std::string_view file) && {
  if (path.empty()) path = file;
  return std::move(*this);
}

std::string error::to_string() const {
  std::string out;
  if (!path.empty()) out = fmt::format("{}: ", path);
  out += message;
  // Said once: a message that already quotes the tensor ("tensor 'w' not found") does not repeat it.
  const bool show_tensor = tensor && message.find(fmt::format("'{}'", *tensor)) == std::string::npos;
  if (offset || show_tensor) {
    out += " (";
    if (offset) out += fmt::format("at byte {}", *offset);
    if (offset && show_tensor) out += ", ";
    if (show_tensor) out += fmt::format("tensor '{}'", *tensor);
    out += ")";
  }
  return out;
}

error make_error(error_code code, std::string message, std::optional<std::uint64_t> offset,
                 std::optional<std::string> tensor) {
  error e;
  e.code = code;
  e.message = std::move(message);
  e.offset = offset;
  e.tensor = std::move(tensor);
  return e;
}

}  // namespace safetensors
