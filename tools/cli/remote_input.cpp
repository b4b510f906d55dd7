// SPDX-License-Identifier: Apache-2.0
#include "remote_input.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "input.h"
#if SAFETENSORS_HAVE_REMOTE
#include "report.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/remote/remote.h"
#endif

namespace st_cli {
namespace {

struct remote_settings {
  std::string token;
  std::string ca_file;
  bool insecure = false;
  double timeout_s = 0;
};

remote_settings& settings() {
  static remote_settings s;
  return s;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

#if SAFETENSORS_HAVE_REMOTE
safetensors::remote::options remote_options(const std::string& url) {
  const remote_settings& s = settings();
  safetensors::remote::options o;
  o.bearer_token = s.token;
  if (o.bearer_token.empty()) {
    for (const char* name : {"SAFETENSORS_TOKEN", "HF_TOKEN"}) {
      if (const char* v = std::getenv(name); v != nullptr && *v != '\0') {
        o.bearer_token = v;
        break;
      }
    }
  }
  o.ca_file = s.ca_file;
  o.insecure = s.insecure;
  if (s.timeout_s > 0) {
    o.connect_timeout_ms = static_cast<long>(s.timeout_s * 1000);
    o.stall_timeout_ms = o.connect_timeout_ms;
  }
  static bool warned = false;
  if (o.insecure && starts_with(url, "https://") && !std::exchange(warned, true)) {
    print_warning("--insecure: TLS certificates and host names are not verified");
  }
  return o;
}
#else
safetensors::error no_remote(const std::string& url) {
  return safetensors::make_error(safetensors::error_code::unsupported,
                                 "this build reads no URLs (it was built without libcurl)")
      .with_path(url.substr(0, url.find_first_of("?#")));
}
#endif

}  // namespace

void add_remote_options(CLI::App& app) {
  remote_settings& s = settings();
  app.add_option("--token", s.token,
                 "Remote URLs: bearer token (default $SAFETENSORS_TOKEN, then $HF_TOKEN); sent to the URL's host only")
      ->group("Remote URLs");
  app.add_option("--ca-file", s.ca_file, "Remote URLs: PEM file of CA certificates to trust (a self-signed server's)")
      ->check(CLI::ExistingFile)
      ->group("Remote URLs");
  app.add_flag("--insecure", s.insecure, "Remote URLs: do not verify TLS certificates (unsafe; says so on stderr)")
      ->group("Remote URLs");
  app.add_option("--timeout", s.timeout_s, "Remote URLs: seconds to connect, and without a byte, before failing")
      ->check(CLI::PositiveNumber)
      ->group("Remote URLs");
}

bool is_url(const std::string& input) {
  return starts_with(input, "http://") || starts_with(input, "https://") || starts_with(input, "file://");
}

safetensors::result<safetensors::file> open_url(const std::string& url, const safetensors::parse_options& parse) {
#if SAFETENSORS_HAVE_REMOTE
  return safetensors::remote::open(url, remote_options(url), parse);
#else
  (void)parse;
  return no_remote(url);
#endif
}

safetensors::result<safetensors::header> read_url_header(const std::string& url,
                                                         const safetensors::parse_options& parse) {
#if SAFETENSORS_HAVE_REMOTE
  return safetensors::remote::read_header(url, remote_options(url), parse);
#else
  (void)parse;
  return no_remote(url);
#endif
}

safetensors::result<safetensors::checkpoint> open_checkpoint_at(const std::string& path,
                                                                const safetensors::checkpoint_options& options) {
  if (!is_url(path)) return safetensors::checkpoint::open(path, options);
#if SAFETENSORS_HAVE_REMOTE
  return safetensors::remote::open_checkpoint(path, remote_options(path), options);
#else
  (void)options;
  return no_remote(path);
#endif
}

safetensors::result<safetensors::verify_report> verify_checkpoint_at(const std::string& path,
                                                                     const safetensors::verify_options& options) {
  if (!is_url(path)) return safetensors::verify_checkpoint(path, options);
#if SAFETENSORS_HAVE_REMOTE
  return safetensors::remote::verify_checkpoint(path, remote_options(path), options);
#else
  (void)options;
  return no_remote(path);
#endif
}

safetensors::result<url_bytes> open_url_bytes(const std::string& url) {
#if SAFETENSORS_HAVE_REMOTE
  if (starts_with(url, "http://") || starts_with(url, "https://")) {
    auto source = safetensors::remote::http_source::open(url, remote_options(url));
    if (!source) return std::move(source).err();
    return url_bytes{std::move(source).value(), {}};
  }
  auto path = safetensors::remote::local_path(url);
  if (!path) return std::move(path).err();
  return url_bytes{nullptr, std::move(path).value()};
#else
  return no_remote(url);
#endif
}

}  // namespace st_cli
