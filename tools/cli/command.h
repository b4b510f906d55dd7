// SPDX-License-Identifier: Apache-2.0
// Subcommand registry: each cmd_*.cpp registers itself, so main.cpp never lists them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report.h"

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

/// Registers at static-initialisation time: `const command_registrar r{"name", "help", setup};`
struct command_registrar {
  command_registrar(std::string name, std::string help, command_setup setup);
};

}  // namespace st_cli
