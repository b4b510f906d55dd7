// SPDX-License-Identifier: Apache-2.0
#include "safetensors/glob.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using safetensors::glob_match;

TEST(Glob, Literals) {
  EXPECT_TRUE(glob_match("a.b", "a.b"));
  EXPECT_FALSE(glob_match("a.b", "a.bc"));
  EXPECT_FALSE(glob_match("a.bc", "a.b"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
}

TEST(Glob, StarSpansDots) {
  EXPECT_TRUE(glob_match("model.*", "model.layers.0.weight"));
  EXPECT_TRUE(glob_match("*.weight", "model.layers.0.weight"));
  EXPECT_FALSE(glob_match("*.weight", "model.layers.0.bias"));
  EXPECT_TRUE(glob_match("model.layers.*.mlp.*", "model.layers.12.mlp.up.weight"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "abxbc"));
  EXPECT_FALSE(glob_match("a*b*c", "abxbd"));
  EXPECT_TRUE(glob_match("**a", "xxa"));
}

TEST(Glob, QuestionSetsAndEscapes) {
  EXPECT_TRUE(glob_match("layers.?.w", "layers.7.w"));
  EXPECT_FALSE(glob_match("layers.?.w", "layers.17.w"));
  EXPECT_TRUE(glob_match("layers.[0-3].w", "layers.2.w"));
  EXPECT_FALSE(glob_match("layers.[0-3].w", "layers.5.w"));
  EXPECT_TRUE(glob_match("layers.[!0-3].w", "layers.5.w"));
  EXPECT_TRUE(glob_match("[]]", "]"));
  EXPECT_TRUE(glob_match("a\\*", "a*"));
  EXPECT_FALSE(glob_match("a\\*", "ab"));
  EXPECT_TRUE(glob_match("a[b", "a[b"));  // unclosed set is literal
}

TEST(Glob, PathologicalPatternStaysFast) {
  // Single-backtrack matching: quadratic at worst, never exponential.
  const std::string text(2000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", text));
}

}  // namespace
