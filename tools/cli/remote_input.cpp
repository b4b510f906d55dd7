// SPDX-License-Identifier: Apache-2.0
#include "remote_input.h"

#include <utility>

#include <CLI/CLI.hpp>

#include "command.h"
#include "report.h"

namespace st_cli {
namespace {

safetensors::url_options& settings() {
  static safetensors::url_options s;
  return s;
}

/// --token; empty (not given, or given empty): the environment's token (url_options).
std::string& token() {
  static std::string t;
  return t;
}

}  // namespace

void add_remote_options(CLI::App& app) {
  safetensors::url_options& s = settings();
  app.add_option("--token", token(),
                 "Remote URLs: bearer token (default $SAFETENSORS_TOKEN, then $HF_TOKEN); sent to the URL's host only")
      ->group("Remote URLs");
  app.add_option("--ca-file", s.ca_file, "Remote URLs: PEM file of CA certificates to trust (a self-signed server's)")
      ->check(CLI::ExistingFile)
      ->group("Remote URLs");
  app.add_flag("--insecure", s.insecure, "Remote URLs: do not verify TLS certificates (unsafe; says so on stderr)")
      ->group("Remote URLs");
  app.add_option("--timeout", s.timeout_s, "Remote URLs: seconds to connect, and without a byte, before failing")
      ->check(number_above_zero)
      ->group("Remote URLs");
}

bool is_url(const std::string& input) { return safetensors::is_url(input); }

safetensors::url_options command_url_options() {
  safetensors::url_options options = settings();
  if (!token().empty()) options.bearer_token = token();
  return options;
}

void warn_if_insecure(const std::string& input) {
  static bool warned = false;
  if (settings().insecure && input.rfind("https://", 0) == 0 && !std::exchange(warned, true)) {
    print_warning("--insecure: TLS certificates and host names are not verified");
  }
}

safetensors::result<safetensors::location> resolve_input(const std::string& input) {
  auto resolved = safetensors::location::resolve(input, command_url_options());
  if (resolved && !resolved->is_local()) warn_if_insecure(input);
  return resolved;
}

safetensors::result<safetensors::checkpoint> open_checkpoint_at(const std::string& path,
                                                                const safetensors::checkpoint_options& options) {
  auto at = resolve_input(path);
  if (!at) return std::move(at).err();
  return at->open_checkpoint(options);
}

safetensors::result<safetensors::verify_report> verify_checkpoint_at(const std::string& path,
                                                                     const safetensors::verify_options& options) {
  auto at = resolve_input(path);
  if (!at) return std::move(at).err();
  return at->verify_checkpoint(options);
}

}  // namespace st_cli
