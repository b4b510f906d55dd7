// SPDX-License-Identifier: Apache-2.0
// Inputs named by a path or a URL: every reading subcommand takes an http://, https:// or
// file:// URL where it takes a path. The options of remote reading (--token, --ca-file,
// --insecure, --timeout) are declared on every subcommand; the library's location door
// (location.h) decides what an input names, with those options.
#pragma once

#include <string>

#include "safetensors/location.h"

namespace CLI {
class App;
}  // namespace CLI

namespace st_cli {

/// Declares the remote reading options on a subcommand.
void add_remote_options(CLI::App& app);

/// True for a URL (`scheme://...`), whether or not this program reads its scheme.
[[nodiscard]] bool is_url(const std::string& input);

/// The remote options of the command line (--token, --ca-file, --insecure, --timeout).
[[nodiscard]] safetensors::url_options command_url_options();

/// Says once that --insecure leaves TLS unverified, when `input` is an https:// URL.
void warn_if_insecure(const std::string& input);

/// What `input` names (location::resolve), with the remote options of the command line.
/// Errors name the URL, never the token.
[[nodiscard]] safetensors::result<safetensors::location> resolve_input(const std::string& input);

/// checkpoint::open / verify_checkpoint of a path or URL (resolve_input, then the location's).
[[nodiscard]] safetensors::result<safetensors::checkpoint> open_checkpoint_at(
    const std::string& path, const safetensors::checkpoint_options& options);
[[nodiscard]] safetensors::result<safetensors::verify_report> verify_checkpoint_at(
    const std::string& path, const safetensors::verify_options& options);

}  // namespace st_cli
