// SPDX-License-Identifier: Apache-2.0
// location::resolve (location.h), the one door every front end opens inputs through: what a
// path or URL names, file:// URLs read by the core itself, and a URL scheme served by a store
// provider registered at run time (as the remote library registers http and https).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "safetensors/location.h"
#include "safetensors/writer.h"
#include "support/demo_store.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
using safetensors::location;
using safetensors::location_kind;
namespace st = safetensors;

void write_one_tensor(const std::filesystem::path& path, const std::string& name) {
  const std::vector<std::byte> data(8, std::byte{1});
  const st::tensor_data t{name, st::dtype::F32, {2}, data};
  ASSERT_OK(st::write_file(path.string(), std::span(&t, 1)));
}

/// What write_one_tensor(path, "w") wrote, opened and read through `at`.
void expect_the_one_tensor_file(const location& at) {
  auto f = at.open_file();
  ASSERT_OK(f);
  EXPECT_NE(f->find("w"), nullptr);
  auto h = at.read_header();
  ASSERT_OK(h);
  EXPECT_EQ(h->tensors().size(), 1u);
}

using st_test::demo_provider;

TEST(Location, PathsAreFilesDirectoriesOrIndexes) {
  const auto dir = st_test::scratch_dir();
  write_one_tensor(dir / "model.safetensors", "w");
  auto file = location::resolve((dir / "model.safetensors").string());
  ASSERT_OK(file);
  EXPECT_EQ(file->kind(), location_kind::file);
  EXPECT_TRUE(file->is_local());
  EXPECT_FALSE(file->names_checkpoint());
  auto directory = location::resolve(dir.string());
  ASSERT_OK(directory);
  EXPECT_EQ(directory->kind(), location_kind::directory);
  EXPECT_TRUE(directory->names_checkpoint());
  auto index = location::resolve((dir / "model.safetensors.index.json").string());  // need not exist yet
  ASSERT_OK(index);
  EXPECT_EQ(index->kind(), location_kind::index);
  auto missing = location::resolve((dir / "nothing.safetensors").string());
  ASSERT_OK(missing);  // resolving reads nothing: opening says what is wrong
  EXPECT_ERROR(missing->open_file(), error_code::io);
}

TEST(Location, FileUrlsAreTheCoresOwnPercentDecoded) {
  const auto dir = st_test::scratch_dir();
  write_one_tensor(dir / "a b%.safetensors", "w");
  for (const std::string prefix : {"file://", "file://localhost"}) {
    auto at = location::resolve(prefix + dir.string() + "/a%20b%25.safetensors");
    ASSERT_OK(at);
    EXPECT_TRUE(at->is_local());
    EXPECT_EQ(at->path(), (dir / "a b%.safetensors").string());
    expect_the_one_tensor_file(*at);
  }
  auto dir_url = location::resolve("file://" + dir.string() + "/");
  ASSERT_OK(dir_url);
  EXPECT_EQ(dir_url->kind(), location_kind::directory);
  EXPECT_ERROR(location::resolve("file://relative/x"), error_code::invalid_argument);
  EXPECT_ERROR(location::resolve("file:///x%2"), error_code::invalid_argument);
  EXPECT_ERROR(location::resolve("file:///x%00y"), error_code::invalid_argument);
}

TEST(Location, AUrlOfASchemeNoProviderServesIsUnsupportedNamingIt) {
  auto at = location::resolve("gopher://host/model.safetensors?secret=1");
  EXPECT_ERROR(at, error_code::unsupported);
  EXPECT_NE(at.err().message.find("gopher://"), std::string::npos) << at.err().message;
  EXPECT_EQ(at.err().path, "gopher://host/model.safetensors");  // no query string: it may carry credentials
  EXPECT_TRUE(st::is_url("HTTPS://x"));
  EXPECT_FALSE(st::is_url("model.safetensors"));
  EXPECT_FALSE(st::is_url("://x"));
  EXPECT_FALSE(st::is_url("a b://x"));
}

TEST(Location, ARegisteredProviderServesItsSchemeWithTheCallersOptions) {
  const auto dir = st_test::scratch_dir();
  write_one_tensor(dir / "model.safetensors", "w");
  const auto provider = std::make_shared<demo_provider>(dir);
  ASSERT_OK(st::register_store_provider("demo", provider));
  st::url_options options;
  options.bearer_token = "t0ken";
  options.connections = 3;
  auto at = location::resolve("demo://host/model.safetensors", options);
  ASSERT_OK(at);
  EXPECT_EQ(at->kind(), location_kind::url);
  EXPECT_FALSE(at->is_local());
  EXPECT_FALSE(at->names_checkpoint());
  {
    std::lock_guard lock(provider->mutex);
    ASSERT_EQ(provider->given.size(), 1u);
    EXPECT_EQ(provider->given.front().bearer_token, "t0ken");
    EXPECT_EQ(provider->given.front().connections, 3);
  }
  expect_the_one_tensor_file(*at);
  auto c = at->open_checkpoint();
  ASSERT_OK(c);
  EXPECT_EQ(c->tensors().size(), 1u);
  auto bytes = at->open_sequential();
  ASSERT_OK(bytes);
  EXPECT_EQ(bytes->reader->size(), std::filesystem::file_size(dir / "model.safetensors"));
  auto base = location::resolve("demo://host/");
  ASSERT_OK(base);
  EXPECT_TRUE(base->names_checkpoint());
  // A checkpoint's URL read as one file says what it is, not "header too large".
  for (const std::string text : {"demo://host/", "demo://host/model.safetensors.index.json?x=1"}) {
    auto index = location::resolve(text);
    ASSERT_OK(index);
    auto as_file = index->open_file();
    EXPECT_ERROR(as_file, error_code::invalid_argument);
    EXPECT_NE(as_file.err().message.find("open it as a checkpoint"), std::string::npos) << as_file.err().message;
    EXPECT_EQ(as_file.err().path, text.substr(0, text.find('?')));
    EXPECT_ERROR(index->read_header(), error_code::invalid_argument);
  }
  // A provider's failure is the resolution's, naming the URL.
  options.ca_file = "refuse";
  auto refused = location::resolve("demo://host/model.safetensors?q", options);
  EXPECT_ERROR(refused, error_code::unsupported);
  EXPECT_EQ(refused.err().path, "demo://host/model.safetensors");
  ASSERT_OK(st::register_store_provider("demo", nullptr));
  EXPECT_ERROR(location::resolve("demo://host/model.safetensors"), error_code::unsupported);
}

TEST(Location, AHubRepositoryUrlIsItsResolveBaseUrl) {
  const auto dir = st_test::scratch_dir();
  ASSERT_OK(st::register_store_provider("demo", std::make_shared<demo_provider>(dir)));
  const std::string base = "demo://host/hub/org/repo/resolve/main/";
  for (const std::string text : {"demo://host/hub/org/repo/resolve/main", "demo://host/hub/org/repo/resolve/main/",
                                 "demo://host/hub/org/repo/tree/main", "demo://host/hub/org/repo/tree/main/"}) {
    auto at = location::resolve(text);
    ASSERT_OK(at);
    EXPECT_EQ(at->path(), base) << text;
    EXPECT_EQ(at->text(), text);
    EXPECT_TRUE(at->names_checkpoint()) << text;
  }
  auto query = location::resolve("demo://host/org/repo/tree/v1.0?x=1");
  ASSERT_OK(query);
  EXPECT_EQ(query->path(), "demo://host/org/repo/resolve/v1.0/?x=1");
  // Files stay files, however their folders are named; too few segments are no repository.
  for (const std::string text :
       {"demo://host/org/repo/resolve/main/model.safetensors", "demo://host/org/tree/model.safetensors",
        "demo://host/tree/main", "demo://host/a/tree/x.json", "demo://host/org/repo/blob"}) {
    auto at = location::resolve(text);
    ASSERT_OK(at);
    EXPECT_EQ(at->path(), text);
  }
  // Served by the store as the base URL: the conventional names in that folder.
  std::filesystem::create_directories(dir / "org/repo/resolve/main");
  write_one_tensor(dir / "org/repo/resolve/main/model.safetensors", "w");
  auto repo = location::resolve("demo://host/org/repo/tree/main");
  ASSERT_OK(repo);
  auto c = repo->open_checkpoint();
  ASSERT_OK(c);
  EXPECT_EQ(c->tensors().size(), 1u);
  ASSERT_OK(st::register_store_provider("demo", nullptr));
}

TEST(Location, OnlyLowerCaseSchemesOtherThanFileTakeProviders) {
  const auto provider = std::make_shared<demo_provider>(st_test::scratch_dir());
  EXPECT_ERROR(st::register_store_provider("file", provider), error_code::invalid_argument);
  EXPECT_ERROR(st::register_store_provider("Demo", provider), error_code::invalid_argument);
  EXPECT_ERROR(st::register_store_provider("", provider), error_code::invalid_argument);
  EXPECT_ERROR(st::register_store_provider("de mo", provider), error_code::invalid_argument);
}

TEST(Location, TheTokenIsTheCallersElseTheEnvironments) {
  const char* saved_st = std::getenv("SAFETENSORS_TOKEN");
  const char* saved_hf = std::getenv("HF_TOKEN");
  const std::string keep_st = saved_st ? saved_st : "";
  const std::string keep_hf = saved_hf ? saved_hf : "";
  ::setenv("SAFETENSORS_TOKEN", "from-st", 1);
  ::setenv("HF_TOKEN", "from-hf", 1);
  st::url_options o;
  EXPECT_EQ(st::bearer_token_of(o), "from-st");
  ::unsetenv("SAFETENSORS_TOKEN");
  EXPECT_EQ(st::bearer_token_of(o), "from-hf");
  o.bearer_token = "";
  EXPECT_EQ(st::bearer_token_of(o), "");  // an explicit empty token sends none
  o.bearer_token = "mine";
  EXPECT_EQ(st::bearer_token_of(o), "mine");
  saved_st ? ::setenv("SAFETENSORS_TOKEN", keep_st.c_str(), 1) : ::unsetenv("SAFETENSORS_TOKEN");
  saved_hf ? ::setenv("HF_TOKEN", keep_hf.c_str(), 1) : ::unsetenv("HF_TOKEN");
}

}  // namespace
