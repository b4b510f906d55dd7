// SPDX-License-Identifier: Apache-2.0
// The remote library as a module loaded at run time (dlopen): the CLI loads it at the first
// http:// or https:// URL (tools/cli/remote_module.cpp), so a run without URLs maps neither
// libcurl nor its TLS, Kerberos, LDAP and IDN stacks. Its one export hands over the store
// provider; the rest of the module (its own copy of the core, when the core is static) stays
// local to it (exports.map).
#include <cstring>
#include <memory>

#include "safetensors/location.h"
#include "safetensors/remote/remote.h"
#include "safetensors/version.h"

/// The provider of http and https stores, or null when the caller was built from another
/// version than this module (the provider's classes would differ): `version` is the caller's
/// SAFETENSORS_VERSION_STRING. The pointer stays valid while the module is loaded.
extern "C" __attribute__((visibility("default"))) const std::shared_ptr<const safetensors::store_provider>*
safetensors_remote_module_v1(const char* version) {
  if (version == nullptr || std::strcmp(version, SAFETENSORS_VERSION_STRING) != 0) return nullptr;
  static const std::shared_ptr<const safetensors::store_provider> provider = safetensors::remote::make_store_provider();
  return &provider;
}
