// SPDX-License-Identifier: Apache-2.0
// How a caller spells the pipeline's options (set_option's names: "max_output_size", "key"),
// so that the library's messages name an option the way its user typed it: the C API's keys
// (option 'max_output_size'), Python's keyword arguments (max_output_size=), the CLI's flags
// (--max-output-size). The library checks options once, for every face.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace safetensors::pipeline {

class option_names {
 public:
  /// The C API's keys, and the default: option 'max_output_size'.
  [[nodiscard]] static option_names keys();
  /// Python's keyword arguments: max_output_size=
  [[nodiscard]] static option_names keywords();
  /// Command-line flags: --max-output-size (underscores become dashes). Options whose flag
  /// is not derived so (--rename-long for hash_long_names) are given with `rename`.
  [[nodiscard]] static option_names flags();

  /// `option` is spelled `spelling` ("hash_long_names" as "--rename-long").
  void rename(std::string option, std::string spelling);

  /// How the caller spells `option`.
  [[nodiscard]] std::string operator()(std::string_view option) const;

 private:
  std::string prefix_;
  std::string suffix_;
  char separator_ = '_';  ///< what an underscore of the name becomes
  std::map<std::string, std::string, std::less<>> renamed_;
};

}  // namespace safetensors::pipeline
