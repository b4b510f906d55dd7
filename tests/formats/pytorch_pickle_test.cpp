// SPDX-License-Identifier: Apache-2.0
// The restricted pickle machine on hand-assembled pickles: what a state_dict uses
// works, everything that could run code or exhaust memory is refused with the opcode
// and its offset.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "safetensors/formats/pickle.h"
#include "support/byte_views.h"
#include "support/status_matchers.h"

namespace st = safetensors;
using namespace std::string_literals;

namespace {

using st_test::bytes_of;

std::string u32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
// Built with append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
std::string str(const std::string& s) {
  return std::string(1, 'X').append(u32(static_cast<std::uint32_t>(s.size()))).append(s);
}
std::string global(const std::string& module, const std::string& name) {
  return std::string(1, 'c').append(module).append(1, '\n').append(name).append(1, '\n');
}
std::string binint(std::uint32_t v) { return std::string(1, 'J').append(u32(v)); }

// {'w': _rebuild_tensor_v2(storage('0', FloatStorage, 6), 1, (2, 2), (1, 2), False, OrderedDict())}
std::string state_dict_pickle() {
  return "\x80\x02}q\x00("s + str("w") + global("torch._utils", "_rebuild_tensor_v2") + "((" + str("storage") +
         global("torch", "FloatStorage") + str("0") + str("cpu") + binint(6) + "tQ" + binint(1) + binint(2) +
         binint(2) + "\x86" + binint(1) + binint(2) + "\x86\x89" + global("collections", "OrderedDict") + ")RtRu.";
}

st::error expect_error(const std::string& pickle, st::error_code code, const std::string& needle,
                       const st::torch::pickle_limits& limits = {}) {
  auto doc = st::torch::unpickle(bytes_of(pickle), limits);
  EXPECT_FALSE(doc.ok());
  if (doc.ok()) return {};
  EXPECT_EQ(doc.err().code, code) << doc.err().message;
  EXPECT_NE(doc.err().message.find(needle), std::string::npos) << doc.err().message;
  EXPECT_TRUE(doc.err().offset.has_value());
  return doc.err();
}

}  // namespace

TEST(PytorchPickle, StateDictBuildsTensorAndStorage) {
  auto doc = st::torch::unpickle(bytes_of(state_dict_pickle()));
  ASSERT_OK(doc);
  const auto& root = doc->root();
  ASSERT_EQ(root.kind, st::torch::pickle_kind::dict);
  ASSERT_EQ(root.items.size(), 2u);
  EXPECT_EQ(root.items[0]->text, "w");
  ASSERT_EQ(root.items[1]->kind, st::torch::pickle_kind::tensor);
  ASSERT_EQ(doc->tensors().size(), 1u);
  const auto& t = doc->tensors()[0];
  EXPECT_EQ(t.type, st::dtype::F32);
  EXPECT_EQ(t.storage_offset, 1u);
  EXPECT_EQ(t.shape, (std::vector<std::uint64_t>{2, 2}));
  EXPECT_EQ(t.strides, (std::vector<std::uint64_t>{1, 2}));
  ASSERT_EQ(doc->storages().size(), 1u);
  EXPECT_EQ(doc->storages()[0].key, "0");
  EXPECT_EQ(doc->storages()[0].element_count, 6u);
  EXPECT_EQ(doc->end_offset(), state_dict_pickle().size());
}

TEST(PytorchPickle, ScalarsDecodeLikePython) {
  // [BININT1 255, BININT2 65535, BININT -2, LONG1 -1, BINFLOAT 1.5, True, None, b'ab', 2**64]
  std::string p = std::string(
                      "\x80\x02(K\xff"
                      "M\xff\xff") +
                  binint(0xfffffffe) + "\x8a\x01\xff" + "G\x3f\xf8\x00\x00\x00\x00\x00\x00"s + "\x88N" +
                  "C\x02"
                  "ab" +
                  "\x8a\x09" + std::string(8, '\0') + "\x01l.";
  auto doc = st::torch::unpickle(bytes_of(p));
  ASSERT_OK(doc);
  const auto& items = doc->root().items;
  ASSERT_EQ(items.size(), 9u);
  EXPECT_EQ(items[0]->integer, 255);
  EXPECT_EQ(items[1]->integer, 65535);
  EXPECT_EQ(items[2]->integer, -2);
  EXPECT_EQ(items[3]->integer, -1);
  EXPECT_EQ(items[4]->floating, 1.5);
  EXPECT_EQ(items[5]->kind, st::torch::pickle_kind::boolean);
  EXPECT_EQ(items[6]->kind, st::torch::pickle_kind::none);
  EXPECT_EQ(items[7]->text, "ab");
  EXPECT_EQ(items[8]->kind, st::torch::pickle_kind::big_integer);
  EXPECT_EQ(items[8]->text, "010000000000000000");
}

// A global outside the allowlist is never imported: it becomes an inert opaque value, and
// calling it (REDUCE, NEWOBJ, NEWOBJ_EX), setting its state (BUILD) or filling it
// (SETITEMS, APPENDS) gives more inert values. Nothing is resolved to code.
TEST(PytorchPickle, UnknownGlobalsAreInertOpaqueValues) {
  const std::vector<std::string> pickles = {
      "\x80\x02" + global("collections", "Counter") + "(" + str("abc") + "tR.",
      "\x80\x04" + str("mylib") + str("Model") + "\x93(" + str("1") + "tR.",
      "\x80\x02" + global("argparse", "Namespace") + ")\x81}(" + str("lr") + binint(1) + "ub.",
      "\x80\x02" + global("collections", "defaultdict") + ")R(" + str("k") + binint(1) + "u.",
      "\x80\x02" + global("mylib", "Things") + ")R(" + binint(1) + binint(2) + "e.",
      "\x80\x04" + global("mylib", "Kw") + ")}\x92.",
      "\x80\x02" + global("pathlib", "PosixPath") + "(" + str("/tmp") + "tR)R.",
  };
  for (const auto& p : pickles) {
    auto doc = st::torch::unpickle(bytes_of(p));
    ASSERT_OK(doc);
    EXPECT_EQ(doc->root().kind, st::torch::pickle_kind::opaque);
    EXPECT_TRUE(doc->root().items.empty());
  }
  auto doc = st::torch::unpickle(bytes_of("\x80\x02" + global("argparse", "Namespace") + "(" + str("id") + "tR."));
  ASSERT_OK(doc);
  EXPECT_EQ(doc->root().text, "argparse.Namespace");
  // Instance creation of protocols 0-1 (Python 2 only) stays refused; so do keyword
  // arguments on an allowlisted class, and an opaque value where a tensor needs a storage.
  expect_error("(" + str("id") + "imylib\nThing\n.", st::error_code::unsafe_content, "INST at pickle byte 8");
  expect_error("\x80\x02(" + global("collections", "OrderedDict") + "o.", st::error_code::unsafe_content,
               "OBJ at pickle byte 28");
  expect_error("\x80\x04" + global("collections", "OrderedDict") + ")}\x92.", st::error_code::unsafe_content,
               "NEWOBJ_EX at pickle byte");
  expect_error("\x80\x02" + global("torch._utils", "_rebuild_tensor_v2") + "(" + global("mylib", "Thing") + "NNNNNtR.",
               st::error_code::invalid_format, "tensor rebuild without a storage");
}

// Protocols 0-1 spell bools, ints, floats and memo indices as text lines.
TEST(PytorchPickle, TextOpcodesOfProtocolOne) {
  auto doc = st::torch::unpickle(
      bytes_of("(I01\nI00\nI42\nI-7\nL123456789012345678901234567890L\nL-5L\nL255L\nF0.25\np3\ng3\nt."s));
  ASSERT_OK(doc);
  const auto& items = doc->root().items;
  ASSERT_EQ(items.size(), 9u);
  EXPECT_EQ(items[0]->kind, st::torch::pickle_kind::boolean);
  EXPECT_EQ(items[0]->integer, 1);
  EXPECT_EQ(items[1]->kind, st::torch::pickle_kind::boolean);
  EXPECT_EQ(items[1]->integer, 0);
  EXPECT_EQ(items[2]->integer, 42);
  EXPECT_EQ(items[3]->integer, -7);
  EXPECT_EQ(items[4]->kind, st::torch::pickle_kind::big_integer);
  EXPECT_EQ(items[4]->text, "018ee90ff6c373e0ee4e3f0ad2");  // 123456789012345678901234567890 in hex
  EXPECT_EQ(items[5]->integer, -5);
  EXPECT_EQ(items[6]->integer, 255);
  EXPECT_EQ(items[7]->floating, 0.25);
  EXPECT_EQ(items[8], items[7]);  // PUT 3, GET 3
  expect_error("I1x\n."s, st::error_code::invalid_format, "INT at pickle byte 0");
  expect_error("L--1L\n."s, st::error_code::invalid_format, "LONG at pickle byte 0");
  expect_error("Fnope\n."s, st::error_code::invalid_format, "FLOAT at pickle byte 0");
  expect_error("Ng-1\n."s, st::error_code::invalid_format, "GET at pickle byte 1");
}

TEST(PytorchPickle, SemanticGuards) {
  // REDUCE on a dtype, a string; NEWOBJ of a tensor class; BUILD on a list;
  // SETITEM on a list; APPEND on a dict; a persistent id that is not a storage.
  expect_error("\x80\x02" + global("torch", "float32") + ")R.", st::error_code::unsafe_content,
               "REDUCE at pickle byte 18: 'torch.float32' cannot be called");
  expect_error("\x80\x02" + str("x") + ")R.", st::error_code::unsafe_content,
               "REDUCE at pickle byte 9: cannot call a str");
  expect_error("\x80\x02" + global("torch", "Tensor") + ")\x81.", st::error_code::unsafe_content,
               "NEWOBJ at pickle byte 17: cannot instantiate 'torch.Tensor'");
  expect_error("\x80\x02]}b.", st::error_code::unsafe_content,
               "BUILD at pickle byte 4: cannot set the state of a list");
  expect_error("\x80\x02]NNs.", st::error_code::unsafe_content, "SETITEM at pickle byte 5: target is not a dict");
  expect_error("\x80\x02}Na.", st::error_code::unsafe_content, "APPEND at pickle byte 4: target is not a list");
  expect_error("\x80\x02(" + str("module") + str("x") + "tQ.", st::error_code::unsafe_content,
               "BINPERSID at pickle byte 21");
  expect_error("\x80\x02\x82\x01.", st::error_code::unsafe_content, "EXT1 at pickle byte 2");
}

TEST(PytorchPickle, CapsOnMemoStackStringsAndContainers) {
  st::torch::pickle_limits small;
  small.max_memo = 2;
  small.max_stack = 4;
  small.max_string = 3;
  small.max_container = 3;
  expect_error("\x80\x02Nq\x00q\x01q\x02."s, st::error_code::limit_exceeded,
               "BINPUT at pickle byte 7: more than 2 memo", small);
  expect_error("\x80\x02NNNNN.", st::error_code::limit_exceeded, "NONE at pickle byte 6: stack deeper than 4", small);
  expect_error("\x80\x02(((((.", st::error_code::limit_exceeded, "MARK at pickle byte 6", small);
  expect_error("\x80\x02" + str("abcd") + ".", st::error_code::limit_exceeded, "string of 4 bytes", small);
  st::torch::pickle_limits few_items;
  few_items.max_container = 3;
  expect_error("\x80\x02](NNNNe.", st::error_code::limit_exceeded, "APPENDS at pickle byte 8: container of more than 3",
               few_items);
  // A 16 MiB length with nothing behind it allocates nothing and fails as truncated.
  expect_error(
      "\x80\x02X\x00\x00\x00\x01"
      "abc."s,
      st::error_code::invalid_format, "truncated");
}

TEST(PytorchPickle, EveryTruncationIsAnErrorNotACrash) {
  const std::string p = state_dict_pickle();
  for (std::size_t n = 0; n < p.size(); ++n) {
    auto doc = st::torch::unpickle(bytes_of(p.substr(0, n)));
    ASSERT_ERROR(doc, st::error_code::invalid_format) << "prefix of " << n << " bytes";
  }
}

TEST(PytorchPickle, MemoCyclesAreHeldSafely) {
  // l = []; l.append(l): the arena owns both references.
  auto doc =
      st::torch::unpickle(bytes_of("\x80\x02]q\x00h\x00"
                                   "a."s));
  ASSERT_OK(doc);
  EXPECT_EQ(doc->root().items.at(0), &doc->root());
}

TEST(PytorchPickle, MalformedArgumentsAreInvalidFormat) {
  expect_error("\x80\x02" + global("torch._utils", "_rebuild_tensor_v2") + "(NNNNNNtR.", st::error_code::invalid_format,
               "tensor rebuild without a storage");
  expect_error(
      "\x80\x02"
      "0.",
      st::error_code::invalid_format, "POP at pickle byte 2: stack underflow");
  expect_error(
      "\x80\x02"
      "e.",
      st::error_code::invalid_format, "no MARK");
  expect_error("\x80\x02h\x05.", st::error_code::invalid_format, "memo entry 5 not set");
  expect_error("\x80\x02\xff.", st::error_code::invalid_format, "opcode 0xff at pickle byte 2");
}

TEST(PytorchPickle, UnicodeStringsMustBeUtf8) {
  auto ok = st::torch::unpickle(bytes_of("\x80\x02"s + str("caf\xc3\xa9") + "."));
  ASSERT_OK(ok);
  EXPECT_EQ(ok->root().text, "caf\xc3\xa9");
  expect_error("\x80\x02"s + str("caf\xc3") + ".", st::error_code::invalid_format, "invalid UTF-8");
  expect_error("\x80\x02"s + str("\xed\xa0\x80") + ".", st::error_code::invalid_format, "invalid UTF-8");  // surrogate
}

TEST(PytorchPickle, RepeatedDictKeysReplaceTheValueAsInPython) {
  auto doc = st::torch::unpickle(bytes_of("\x80\x02}(" + str("a") + "N" + str("b") + "N" + str("a") + "K\x07u."));
  ASSERT_OK(doc);
  ASSERT_EQ(doc->root().items.size(), 4u);
  EXPECT_EQ(doc->root().items[0]->text, "a");
  EXPECT_EQ(doc->root().items[1]->integer, 7);
  EXPECT_EQ(doc->root().items[2]->text, "b");
}
