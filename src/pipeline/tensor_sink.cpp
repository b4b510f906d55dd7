// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/tensor_sink.h"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "safetensors/pipeline/format_table.h"
#include "safetensors/pipeline/output_check.h"
#include "usage_error.h"

namespace safetensors::pipeline {

namespace {

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

error usage(std::string message, const std::string& path) { return detail::usage(std::move(message)).with_path(path); }

/// "a, b or c"
std::string listed_with_or(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

/// The row `word` names: its id, or one of its extensions without the dot.
const format_row* named_format(std::string_view word) {
  if (const format_row* row = find_format(word)) return row;
  for (const format_row* row : formats()) {
    for (const auto& e : row->extensions) {
      if (std::string_view(e).substr(1) == word) return row;
    }
  }
  return nullptr;
}

/// What the messages offer: each written format with a file extension, by id and by extension.
struct written_choices {
  std::string ids;         ///< "safetensors, npz, npy or gguf"
  std::string extensions;  ///< ".safetensors, .npz, .npy or .gguf"
};

written_choices written_format_choices() {
  std::vector<std::string> ids;
  std::vector<std::string> extensions;
  for (const format_row* row : formats()) {
    if (!row->make_sink || row->extensions.empty()) continue;
    ids.push_back(row->id);
    extensions.push_back(row->extensions.front());
  }
  return {listed_with_or(ids), listed_with_or(extensions)};
}

}  // namespace

result<const format_row*> output_format_for(const std::string& path, std::string_view to_format) {
  const std::string ext = extension_of(path);
  const bool directory = is_directory_path(path);
  const std::string to =
      to_format.empty() ? (ext.empty() || directory ? std::string() : ext.substr(1)) : std::string(to_format);
  const format_row* sharded = find_format("sharded");
  if (to == "sharded") return sharded;
  if (to == "safetensors" || (to.empty() && directory)) return directory ? sharded : find_format("safetensors");
  if (directory) {
    return usage(
        fmt::format("a directory output is a sharded SafeTensors checkpoint, not {}: name a file for {}", to, to),
        path);
  }
  const format_row* row = to.empty() ? nullptr : named_format(to);
  if (row != nullptr && row->make_sink) return row;
  const written_choices written = written_format_choices();
  if (row != nullptr) {
    return usage(fmt::format("{} files are read, not written: write {} (end the name in {}, or give the format)",
                             row->name, written.ids, written.extensions),
                 path);
  }
  if (!to_format.empty()) return usage(fmt::format("unknown output format '{}': {}", to, written.ids), path);
  return usage(fmt::format("cannot tell the output format from the name: end it in {}, or give the format ({})",
                           written.extensions, written.ids),
               path);
}

}  // namespace safetensors::pipeline
