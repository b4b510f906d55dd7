// SPDX-License-Identifier: Apache-2.0
// Subcommand registry: each cmd_*.cpp registers itself, so main.cpp never lists them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report.h"
#include "safetensors/policy.h"

namespace st_cli {

/// Runs a subcommand whose options were parsed.
using runner = std::function<run_result()>;

/// Declares a subcommand's options on `app` and returns what runs it.
using command_setup = std::function<runner(CLI::App& app)>;

struct command {
  std::string name;
  std::string help;
  command_setup setup;
};

/// Every registered subcommand, in registration order.
std::vector<command>& registry();

/// Checks for numeric options, with messages that say what is expected (CLI11's own turn a
/// negative count into a huge one, or print its range's limits as 309-digit numbers).
/// A count: digits only, so "-1" is refused rather than read as 2^64 - 1.
inline const CLI::Validator whole_number(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      return digits ? std::string() : "expected a whole number >= 0, got '" + text + "'";
    },
    "");  // no name: the help shows the option's type alone
/// Seconds and other amounts above zero.
inline const CLI::Validator number_above_zero(
    [](std::string& text) -> std::string {
      double value = 0;
      return CLI::detail::lexical_cast(text, value) && value > 0 ? std::string()
                                                                 : "expected a number above 0, got '" + text + "'";
    },
    "");

/// An output path: "-" would be a file named '-', not standard output, which no writing
/// command can write (outputs are written atomically, beside their target).
inline const CLI::Validator output_file(
    [](std::string& text) -> std::string {
      return text == "-" ? "'-' (standard output) cannot be written: name a file (./- for a file named '-')"
                         : std::string();
    },
    "");

/// The options several subcommands share, declared once with one spelling.
/// `-q, --quiet`: no progress bar (and whatever else `help` says).
inline void add_quiet(CLI::App& app, bool& quiet, const std::string& help = "No progress bar") {
  app.add_flag("-q,--quiet", quiet, help);
}
/// `--max-output-size SIZE` on every writing command: the output budget
/// (safetensors/pipeline/output_check.h), the library's option max_output_size.
inline CLI::Option* add_max_output_size(CLI::App& app, std::string& size) {
  return app.add_option(
      "--max-output-size", size,
      "Most tensor bytes the output may hold, decimal (20GB) or binary (16GiB) units; a bigger plan is "
      "refused before anything is written (default: 64 times the input's size, at least 1 GiB)");
}
/// `--json`: machine-readable output, as `help` describes it.
inline void add_json(CLI::App& app, bool& json, const std::string& help) { app.add_flag("--json", json, help); }
/// `--only GLOB` and `--exclude GLOB`, repeatable (safetensors/pipeline/tensor_filter.h).
/// Returns the two options.
inline std::pair<CLI::Option*, CLI::Option*> add_selection(CLI::App& app, std::vector<std::string>& only,
                                                           std::vector<std::string>& exclude,
                                                           const std::string& only_help,
                                                           const std::string& exclude_help) {
  return {app.add_option("--only", only, only_help + " (repeatable)")->allow_extra_args(false),
          app.add_option("--exclude", exclude, exclude_help + " (repeatable)")->allow_extra_args(false)};
}
/// `--policy`: one of the library's validation policies (safetensors/policy.h).
inline void add_policy(CLI::App& app, std::string& policy, const std::string& help) {
  std::vector<std::string> names;
  for (auto p : {safetensors::validation_policy::reference, safetensors::validation_policy::strict,
                 safetensors::validation_policy::lenient}) {
    names.emplace_back(safetensors::policy_name(p));
  }
  app.add_option("--policy", policy, help)->check(CLI::IsMember(names));
}

/// Registers at static-initialisation time: `const command_registrar r{"name", "help", setup};`
struct command_registrar {
  command_registrar(std::string name, std::string help, command_setup setup);
};

}  // namespace st_cli
