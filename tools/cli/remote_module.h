// SPDX-License-Identifier: Apache-2.0
// http:// and https:// URLs through the remote module, loaded at the first URL: a run without
// URLs maps no HTTP client (libcurl and its TLS, Kerberos, LDAP and IDN stacks).
#pragma once

namespace st_cli {

/// Registers (location.h) the provider of http and https URLs that loads the remote module,
/// safetensors-remote.so, when one is first resolved: $SAFETENSORS_REMOTE_MODULE when set, else
/// the module beside the executable (the build tree) or in the install's lib/safetensors/.
/// When it cannot be loaded, resolving a URL fails with an error naming where it was looked for.
void register_remote_module();

}  // namespace st_cli
