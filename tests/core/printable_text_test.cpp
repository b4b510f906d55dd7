// SPDX-License-Identifier: Apache-2.0
// printable_text: the one escaping of untrusted text for terminals. Each control class is
// written as its documented escape, everything else (UTF-8 text included) as is, and the
// notation is unambiguous: `\xHH` is one input byte, `\uHHHH` one character, `\\` a backslash.
#include "safetensors/printable_text.h"

#include <gtest/gtest.h>

#include <span>
#include <string>

#include "safetensors/header.h"
#include "safetensors/json_text.h"

namespace {

using safetensors::printable_text;

TEST(PrintableText, PlainTextAndUtf8StayAsTheyAre) {
  EXPECT_EQ(printable_text("model.layers.0.weight"), "model.layers.0.weight");
  EXPECT_EQ(printable_text("caf\u00e9 \u65e5\u672c \U0001F600"), "caf\u00e9 \u65e5\u672c \U0001F600");
  EXPECT_EQ(printable_text(""), "");
}

TEST(PrintableText, EscapesC0ControlsEscAndDel) {
  EXPECT_EQ(printable_text("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable_text("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
  EXPECT_EQ(printable_text("\r\x1b[2K\x1b[1A"), "\\r\\x1b[2K\\x1b[1A");
  EXPECT_EQ(printable_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable_text("\x7f"), "\\x7f");
  EXPECT_EQ(printable_text("\x1f"), "\\x1f");
}

TEST(PrintableText, EscapesC1AndBidirectionalControls) {
  EXPECT_EQ(printable_text("\u0080\u009b31m\u009f"), "\\u0080\\u009b31m\\u009f");
  EXPECT_EQ(printable_text("\u00a0"), "\u00a0");  // the first character after C1 is printable
  EXPECT_EQ(printable_text("\u202a\u202b\u202c\u202d\u202e"), "\\u202a\\u202b\\u202c\\u202d\\u202e");
  EXPECT_EQ(printable_text("\u2066\u2067\u2068\u2069"), "\\u2066\\u2067\\u2068\\u2069");
  EXPECT_EQ(printable_text("\u2028\u2029"), "\\u2028\\u2029");
  EXPECT_EQ(printable_text("\u2027\u202f\u2065\u206a"), "\u2027\u202f\u2065\u206a");  // neighbours stay
}

TEST(PrintableText, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(printable_text("\xff"), "\\xff");
  EXPECT_EQ(printable_text("a\xc3(b"), "a\\xc3(b");                       // a lead byte without its continuation
  EXPECT_EQ(printable_text("\xe2\x80"), "\\xe2\\x80");                    // cut short
  EXPECT_EQ(printable_text("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(printable_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable_text("\xc2\x9b"), "\\u009b");                       // the same bytes as a character: C1 CSI
}

TEST(PrintableText, BackslashIsEscapedSoEveryEscapeIsUnambiguous) {
  EXPECT_EQ(printable_text("a\\x1b"), "a\\\\x1b");  // the text "\x1b", not ESC
  EXPECT_NE(printable_text("a\\x1b"), printable_text("a\x1b"));
}

TEST(PrintableText, CutsBetweenCharactersAndSaysTheLength) {
  EXPECT_EQ(printable_text("abcdef", 3), "abc... (6 bytes)");
  EXPECT_EQ(printable_text("abc", 3), "abc");
  EXPECT_EQ(printable_text("ab\u00e9", 3), "ab... (4 bytes)");  // not through the two-byte character
  EXPECT_EQ(printable_text("a\nb", 2), "a\\n... (3 bytes)");
  EXPECT_EQ(printable_text(std::string(10, '\x80'), 4), "\\x80\\x80\\x80\\x80... (10 bytes)");
}

TEST(JsonQuoteForDisplay, EscapesDelC1AndBidirectionalControls) {
  EXPECT_EQ(safetensors::json_quote("\x1b[2J"), "\"\\u001b[2J\"");
  EXPECT_EQ(safetensors::json_quote("\x7f\u009b\u202e\u2066\u2069"), "\"\\u007f\\u009b\\u202e\\u2066\\u2069\"");
  EXPECT_EQ(safetensors::json_quote("\u00a0\u2027\u202f\u00e9"), "\"\u00a0\u2027\u202f\u00e9\"");
}

// The header as inspect --json shows it: the writer's JSON, names and metadata quoted for display.
TEST(JsonQuoteForDisplay, HeaderToDisplayJsonDiffersFromTheWritersOnlyInThoseEscapes) {
  const std::string json =
      R"({"__metadata__":{"k\u202e":"v\u007f"},"a\u009b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  auto h = safetensors::parse_header(std::as_bytes(std::span(json.data(), json.size())), 8 + json.size() + 1);
  ASSERT_TRUE(h.ok()) << h.err().message;
  EXPECT_EQ(safetensors::header_to_display_json(*h), json);
  // The writer's bytes leave those characters raw (serde_json escapes C0 controls only).
  EXPECT_EQ(safetensors::header_to_json(*h),
            "{\"__metadata__\":{\"k\xe2\x80\xae\":\"v\x7f\"},\"a\xc2\x9b\":{\"dtype\":\"U8\",\"shape\":[1],"
            "\"data_offsets\":[0,1]}}");
}

}  // namespace
