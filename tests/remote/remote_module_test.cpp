// SPDX-License-Identifier: Apache-2.0
// The CLI's HTTP client is a module loaded at the first http(s) URL (tools/cli/remote_module.cpp):
// the binary needs no libcurl, a run without a URL loads none, and a missing module is an error
// that says where it was looked for. No server: a URL of a closed port is enough to load it.
#include <gtest/gtest.h>

#include <string>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

using st_test::cli_shell;
using st_test::quoted_path;
using st_test::run_cli;
using st_test::run_command;

const std::string closed_port_url = "http://127.0.0.1:9/model.safetensors";

std::filesystem::path small_model() {
  const auto path = st_test::scratch_dir() / "m.safetensors";
  EXPECT_EQ(run_cli({"convert", SAFETENSORS_SOURCE_DIR "/tests/fixtures/numpy/dtype_f4.npy", path.string()}).status, 0);
  return path;
}

TEST(RemoteModule, TheCliNeedsNoHttpClient) {
  const auto dynamic = run_command("readelf -d " + cli_shell());
  ASSERT_EQ(dynamic.status, 0) << dynamic.out;
  EXPECT_NE(dynamic.out.find("NEEDED"), std::string::npos) << dynamic.out;
  EXPECT_EQ(dynamic.out.find("libcurl"), std::string::npos) << dynamic.out;
}

TEST(RemoteModule, LibcurlIsLoadedAtTheFirstUrlOnly) {
  const auto model = small_model();
  // LD_DEBUG=files names every object the dynamic loader loads, dlopen'ed ones included.
  const auto local = run_command("LD_DEBUG=files " + cli_shell("validate " + quoted_path(model)), true);
  EXPECT_EQ(local.status, 0) << local.out;
  EXPECT_EQ(local.out.find("libcurl"), std::string::npos) << local.out;
  const auto remote = run_command("LD_DEBUG=files " + cli_shell("validate " + closed_port_url), true);
  EXPECT_NE(remote.status, 0);
  EXPECT_NE(remote.out.find("safetensors-remote.so"), std::string::npos) << remote.out;
  EXPECT_NE(remote.out.find("libcurl"), std::string::npos) << remote.out;
  EXPECT_NE(remote.out.find("127.0.0.1 port 9"), std::string::npos) << remote.out;  // the HTTP client's own error
}

TEST(RemoteModule, AMissingModuleIsAnErrorNamingWhereItWasLookedFor) {
  const auto r = run_command("SAFETENSORS_REMOTE_MODULE=/nonexistent/safetensors-remote.so " +
                             cli_shell("validate " + closed_port_url + " 2>&1"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("Unsupported: reading http(s) URLs needs the remote module safetensors-remote.so, which is "
                       "not installed: looked for /nonexistent/safetensors-remote.so"),
            std::string::npos)
      << r.out;
  // A file:// URL is the core's own: no module needed.
  const auto model = small_model();
  const auto local = run_command("SAFETENSORS_REMOTE_MODULE=/nonexistent/safetensors-remote.so " +
                                 cli_shell("validate " + st_test::shell_quote("file://" + model.string())));
  EXPECT_EQ(local.status, 0) << local.out;
  EXPECT_NE(local.out.find("ok (1 tensor)"), std::string::npos) << local.out;
}

TEST(RemoteModule, AModuleOfAnotherKindIsRefused) {
  // Any shared object without the entry point: named, not crashed on.
  const auto r = run_command("SAFETENSORS_REMOTE_MODULE=$(" + std::string("gcc -print-file-name=libgcc_s.so.1") + ") " +
                             cli_shell("validate " + closed_port_url + " 2>&1"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("is not the one of safetensors"), std::string::npos) << r.out;
}

}  // namespace
