// SPDX-License-Identifier: Apache-2.0
// Entry point of the `safetensors` tool: builds the subcommands from the registry,
// parses the command line, runs the chosen one. Never lets an exception escape.
#include <algorithm>
#include <exception>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "command.h"
#include "remote_input.h"
#include "remote_module.h"
#include "report.h"
#include "safetensors/cleanup.h"
#include "safetensors/version.h"

namespace st_cli {

std::vector<command>& registry() {
  static std::vector<command> commands;
  return commands;
}

command_registrar::command_registrar(std::string name, std::string help, command_setup setup) {
  registry().push_back({std::move(name), std::move(help), std::move(setup)});
}

namespace {

/// The subcommand named on the command line (the first argument that is not an option).
std::string_view subcommand_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') return argv[i];
  }
  return {};
}

bool is_registered(std::string_view name) {
  return std::any_of(registry().begin(), registry().end(), [&](const command& c) { return c.name == name; });
}

/// One line naming what is wrong and where help is: the subcommand's own --help when one was given.
std::string usage_message(const CLI::ParseError& e, std::string_view sub) {
  const std::string help = sub.empty() ? "safetensors --help" : fmt::format("safetensors {} --help", sub);
  return fmt::format("{} (see '{}')", e.what(), help);
}

}  // namespace
}  // namespace st_cli

int main(int argc, char** argv) {
  using namespace st_cli;
  // Ctrl-C or a kill during a write removes the hidden temporaries (no half-written outputs).
  safetensors::remove_temporaries_on_signals();
  register_remote_module();  // http(s) URLs load the HTTP client when one is used
  try {
    CLI::App app{"Inspect, validate and write SafeTensors files.", "safetensors"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("safetensors ") + safetensors::version_string);
    std::map<CLI::App*, runner> runners;
    const std::string_view named = subcommand_word(argc, argv);
    // A command line that starts with a subcommand (no top-level option such as --help before
    // it) builds only that one: all of them are most of what a short run (validate of a small
    // file) does itself.
    const bool one = argc > 1 && named == argv[1] && is_registered(named);
    for (const command& c : registry()) {
      if (one && c.name != named) continue;
      CLI::App* sub = app.add_subcommand(c.name, c.help);
      runners[sub] = c.setup(*sub);
      add_remote_options(*sub);  // any input may be a URL
    }
    if (!named.empty() && !is_registered(named)) {
      print_error(fmt::format("unknown subcommand '{}' (see 'safetensors --help')", named));
      return exit_usage;
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      // Same one-line shape as every other error, so scripts parse one format.
      print_error(usage_message(e, is_registered(named) ? named : std::string_view{}));
      return exit_usage;
    }
    for (auto& [sub, run] : runners) {
      if (!sub->parsed()) continue;
      const run_result outcome = run();
      if (outcome) return *outcome;
      // The one place a command's failure is printed.
      print_error(outcome.err());
      return exit_code_for(outcome.err());
    }
    return exit_usage;
  } catch (const std::exception& e) {
    print_error(fmt::format("internal error: {}", e.what()));
    return exit_usage;
  }
}
