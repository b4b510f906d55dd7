// SPDX-License-Identifier: Apache-2.0
// location.h: what a path or URL names, decided once, and the store that serves it. The
// providers of URL schemes are registered at run time, so the core links no HTTP client.
#include "safetensors/location.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

namespace safetensors {
namespace {

struct provider_registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const store_provider>, std::less<>> providers;
};

provider_registry& registry() {
  static provider_registry r;
  return r;
}

std::shared_ptr<const store_provider> provider_of(std::string_view scheme) {
  provider_registry& r = registry();
  std::lock_guard lock(r.mutex);
  const auto found = r.providers.find(scheme);
  return found == r.providers.end() ? nullptr : found->second;
}

bool is_scheme_char(char c, bool first) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return alpha || (!first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
}

/// The scheme of `text` in lower case, or empty when it is not `scheme://...`.
std::string scheme_of(std::string_view text) {
  const auto colon = text.find("://");
  if (colon == std::string_view::npos || colon == 0) return {};
  std::string scheme;
  for (std::size_t i = 0; i < colon; ++i) {
    if (!is_scheme_char(text[i], i == 0)) return {};
    scheme += static_cast<char>(text[i] >= 'A' && text[i] <= 'Z' ? text[i] - 'A' + 'a' : text[i]);
  }
  return scheme;
}

/// What errors show of a URL: no query string or fragment (they may carry credentials).
std::string shown_url(std::string_view url) { return std::string(url.substr(0, url.find_first_of("?#"))); }

error bad_file_url(std::string_view url, std::string_view why) {
  return make_error(error_code::invalid_argument, fmt::format("invalid URL: {}", why)).with_path(shown_url(url));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The local path of a `file://` URL: `file:///p` or `file://localhost/p`, percent-decoded.
result<std::string> file_url_path(std::string_view url) {
  std::string_view rest = url.substr(std::string_view("file://").size());
  if (rest.starts_with("localhost/")) rest.remove_prefix(std::string_view("localhost").size());
  if (rest.empty() || rest.front() != '/')
    return bad_file_url(url, "a file:// URL names an absolute path on this host");
  std::string path;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '%') {
      path += rest[i];
      continue;
    }
    const int high = i + 2 < rest.size() ? hex_value(rest[i + 1]) : -1;
    const int low = high < 0 ? -1 : hex_value(rest[i + 2]);
    if (low < 0) return bad_file_url(url, "a '%' not followed by two hex digits");
    path += static_cast<char>(high * 16 + low);
    i += 2;
  }
  if (path.find('\0') != std::string::npos) return bad_file_url(url, "a NUL byte in the path");
  return path;
}

/// A hub repository URL, `BASE/ORG/REPO/resolve/REV` or the browser's `BASE/ORG/REPO/tree/REV`
/// (a `/` after REV or not), as the base URL `BASE/ORG/REPO/resolve/REV/` whose conventional
/// files (model.safetensors.index.json, model.safetensors) the store looks for, as hub tools do;
/// any other URL as it is.
std::string hub_base_url(const std::string& url) {
  const std::size_t end = url.find_first_of("?#");
  std::string_view path = std::string_view(url).substr(0, end);
  const std::size_t authority = path.find("://") + 3;
  if (path.ends_with("/")) path.remove_suffix(1);
  // The path's segments from the end: REV, then "resolve" or "tree", then REPO and ORG.
  std::string_view segments[4];
  std::size_t cut = path.size();
  for (auto& segment : segments) {
    const std::size_t slash = path.rfind('/', cut == 0 ? 0 : cut - 1);
    if (slash == std::string_view::npos || slash < authority) return url;
    segment = path.substr(slash + 1, cut - slash - 1);
    if (segment.empty()) return url;
    cut = slash;
  }
  if (segments[1] != "resolve" && segments[1] != "tree") return url;
  // A file in a folder that happens to be called "tree" stays a file.
  if (segments[0].ends_with(".safetensors") || segments[0].ends_with(".json")) return url;
  const auto repository = path.substr(0, static_cast<std::size_t>(segments[1].data() - path.data()));
  const std::string base = fmt::format("{}resolve/{}/", repository, segments[0]);
  return end == std::string::npos ? base : base + url.substr(end);
}

std::shared_ptr<const checkpoint_store> local_store_pointer() {
  // The local store is a static: the pointer owns nothing.
  return {std::shared_ptr<const checkpoint_store>{}, &local_checkpoint_store()};
}

}  // namespace

std::string bearer_token_of(const url_options& options) {
  if (options.bearer_token) return *options.bearer_token;
  for (const char* name : {"SAFETENSORS_TOKEN", "HF_TOKEN"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return v;
  }
  return {};
}

status register_store_provider(std::string_view scheme, std::shared_ptr<const store_provider> provider) {
  if (scheme.empty() || scheme_of(fmt::format("{}://", scheme)) != scheme) {
    return make_error(error_code::invalid_argument, fmt::format("'{}' is not a lower-case URL scheme", scheme));
  }
  if (scheme == "file") {
    return make_error(error_code::invalid_argument, "file:// URLs are the local store's; they take no provider");
  }
  provider_registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (provider) {
    r.providers[std::string(scheme)] = std::move(provider);
  } else {
    r.providers.erase(std::string(scheme));
  }
  return {};
}

bool is_url(std::string_view text) noexcept { return !scheme_of(text).empty(); }

result<location> location::resolve(const std::string& text, const url_options& options) {
  const std::string scheme = scheme_of(text);
  std::string path = text;
  if (scheme == "file") {
    auto local = file_url_path(text);
    if (!local) return std::move(local).err();
    path = std::move(local).value();
  } else if (!scheme.empty()) {
    const auto provider = provider_of(scheme);
    if (!provider) {
      return make_error(error_code::unsupported, fmt::format("this program reads no {}:// URLs", scheme))
          .with_path(shown_url(text));
    }
    auto store = provider->store(options);
    if (!store) return std::move(store).err().with_path(shown_url(text));
    return location(location_kind::url, text, hub_base_url(text), std::move(store).value());
  }
  std::error_code ec;
  const location_kind kind = std::filesystem::is_directory(path, ec) ? location_kind::directory
                             : path.ends_with(".json")               ? location_kind::index
                                                                     : location_kind::file;
  return location(kind, text, std::move(path), local_store_pointer());
}

bool location::names_checkpoint() const noexcept {
  if (kind_ != location_kind::url) return kind_ != location_kind::file;
  const std::string shown = shown_url(path_);
  return shown.ends_with("/") || shown.ends_with(".json");
}

namespace {

/// One file of a URL that names a checkpoint: its bytes would be JSON read as a length prefix
/// ("header too large"), so the caller is told what the URL is instead.
std::optional<error> location_checkpoint_not_a_file(const location& at) {
  if (at.kind() != location_kind::url || !at.names_checkpoint()) return std::nullopt;
  return make_error(error_code::invalid_argument,
                    "this URL names a checkpoint (an index or a base URL), not one SafeTensors file: open it as a "
                    "checkpoint (open_checkpoint)")
      .with_path(shown_url(at.text()));
}

}  // namespace

result<file> location::open_file(const open_options& options) const {
  if (auto e = location_checkpoint_not_a_file(*this)) return std::move(*e);
  auto opened = store_->open_files(std::span<const std::string>(&path_, 1), options);
  return std::move(opened.front());
}

result<header> location::read_header(const parse_options& options) const {
  if (is_local()) return safetensors::read_header(path_, options);
  if (auto e = location_checkpoint_not_a_file(*this)) return std::move(*e);
  auto bytes = store_->open_sequential(path_);
  if (!bytes) return std::move(bytes).err();
  return safetensors::read_header(std::move(bytes->reader), options);
}

result<checkpoint> location::open_checkpoint(const checkpoint_options& options) const {
  return checkpoint::open(path_, options, *store_);
}

result<verify_report> location::verify_checkpoint(const verify_options& options) const {
  return safetensors::verify_checkpoint(path_, options, *store_);
}

result<sequential_file> location::open_sequential() const { return store_->open_sequential(path_); }

}  // namespace safetensors
