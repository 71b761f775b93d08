// The JSON value, writer and parser (reports/json.h, RFC 8259) and the result model's
// JSON form (reports/model.h).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

#include "json.h"
#include "model.h"

namespace simt {
namespace {

using json::Array;
using json::Object;
using json::Value;

Value parse_ok(std::string_view text) {
  auto r = json::parse(text);
  if (auto* e = std::get_if<json::ParseError>(&r)) {
    ADD_FAILURE() << "parse error at " << e->offset << ": " << e->message << "\ninput: " << text;
    return Value();
  }
  return std::get<Value>(r);
}

// The input is rejected with an error at `offset` whose message contains `substr`.
void expect_parse_error(std::string_view text, size_t offset, std::string_view substr) {
  SCOPED_TRACE(testing::Message() << "input: " << testing::PrintToString(std::string(text)));
  auto r = json::parse(text);
  auto* e = std::get_if<json::ParseError>(&r);
  ASSERT_NE(e, nullptr) << "accepted: " << json::dump(std::get<Value>(r));
  EXPECT_EQ(e->offset, offset) << e->message;
  EXPECT_NE(e->message.find(substr), std::string::npos) << e->message;
}

Value sample() {
  Value v;
  v["null"] = nullptr;
  v["t"] = true;
  v["f"] = false;
  v["int"] = int64_t{-42};
  v["big"] = std::numeric_limits<int64_t>::max();
  v["small"] = std::numeric_limits<int64_t>::min();
  v["pi"] = 3.25;
  v["tiny"] = -1.5e-300;
  v["str"] = "line\nbreak \"quoted\" back\\slash \t tab";
  v["empty_s"] = "";
  v["empty_a"] = Array{};
  v["empty_o"] = Object{};
  v["arr"] = Array{Value(1), Value("two"), Value(Array{Value(3.5), Value(nullptr)}),
                   Value(Object{{"k", Value(false)}})};
  v["nested"]["deeper"]["deepest"] = "x";
  return v;
}

// ---- dump / parse round trip ----------------------------------------------------------

TEST(JsonRoundTrip, CompactAndIndented) {
  const Value v = sample();
  for (int indent : {-1, 0, 2, 4}) {
    SCOPED_TRACE(indent);
    const std::string text = json::dump(v, indent);
    EXPECT_EQ(parse_ok(text), v) << text;
  }
  EXPECT_EQ(json::dump(v).find('\n'), std::string::npos);
  EXPECT_NE(json::dump(v, 2).find('\n'), std::string::npos);
}

TEST(JsonRoundTrip, ObjectsKeepInsertionOrder) {
  Value v;
  v["zeta"] = 1;
  v["alpha"] = 2;
  v["mid"] = 3;
  v["alpha"] = 4;  // replaces in place
  EXPECT_EQ(json::dump(v), R"({"zeta":1,"alpha":4,"mid":3})");
  ASSERT_NE(v.find("alpha"), nullptr);
  EXPECT_EQ(v.find("alpha")->as_int(), 4);
  EXPECT_EQ(v.find("nope"), nullptr);
  EXPECT_EQ(Value(3).find("x"), nullptr);
  Value a;
  a.push_back(1);
  a.push_back("x");
  EXPECT_EQ(json::dump(a), R"([1,"x"])");
}

TEST(JsonRoundTrip, Literals) {
  EXPECT_EQ(json::dump(Value()), "null");
  EXPECT_EQ(json::dump(Value(true)), "true");
  EXPECT_EQ(json::dump(Value(false)), "false");
  EXPECT_TRUE(parse_ok("null").is_null());
  EXPECT_EQ(parse_ok(" \t\r\n true \n"), Value(true));
  EXPECT_EQ(parse_ok("false"), Value(false));
  EXPECT_EQ(parse_ok("[ ]"), Value(Array{}));
  EXPECT_EQ(parse_ok("{ }"), Value(Object{}));
}

// Arbitrary strings survive (any bytes: JSON strings are written byte-transparently
// except for the characters that must be escaped).
RC_GTEST_PROP(JsonProperty, StringsRoundTrip, (const std::string& s)) {
  const Value v(s);
  const std::string text = json::dump(v);
  auto r = json::parse(text);
  RC_ASSERT(std::holds_alternative<Value>(r));
  RC_ASSERT(std::get<Value>(r) == v);
}

RC_GTEST_PROP(JsonProperty, IntegersRoundTrip, (int64_t n)) {
  auto r = json::parse(json::dump(Value(n)));
  RC_ASSERT(std::holds_alternative<Value>(r));
  RC_ASSERT(std::get<Value>(r).is_int());
  RC_ASSERT(std::get<Value>(r).as_int() == n);
}

RC_GTEST_PROP(JsonProperty, DoublesRoundTripAsNumbers, (double d)) {
  RC_PRE(std::isfinite(d));
  auto r = json::parse(json::dump(Value(d)));
  RC_ASSERT(std::holds_alternative<Value>(r));
  RC_ASSERT(std::get<Value>(r).is_number());
  RC_ASSERT(std::get<Value>(r).as_double() == d);
}

// ---- escapes ------------------------------------------------------------------------------

TEST(JsonEscapes, WrittenEscapes) {
  EXPECT_EQ(json::escape("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(json::escape("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(json::escape(std::string_view("\0\x01\x1f", 3)), R"("\u0000\u0001\u001f")");
  EXPECT_EQ(json::escape(" /~\x7f"), "\" /~\x7f\"");
  EXPECT_EQ(json::escape("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST(JsonEscapes, EveryControlCharacterRoundTrips) {
  std::string all;
  for (int c = 0; c < 0x20; ++c) all += static_cast<char>(c);
  const std::string text = json::dump(Value(all));
  for (char c : text) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "raw control char written";
  EXPECT_EQ(parse_ok(text).as_string(), all);
}

TEST(JsonEscapes, ParsedEscapes) {
  EXPECT_EQ(parse_ok(R"("\"\\\/\b\f\n\r\t")").as_string(), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(parse_ok(R"("\u0041\u00e9\u20AC")").as_string(), "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(parse_ok(R"("\u0000")").as_string(), std::string(1, '\0'));
  EXPECT_EQ(parse_ok(R"("\u007f\u0080\u07ff\u0800\uffff")").as_string(),
            "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf");
}

TEST(JsonEscapes, SurrogatePairs) {
  // U+1F600 and U+10FFFF, U+10000.
  EXPECT_EQ(parse_ok(R"("\ud83d\ude00")").as_string(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(parse_ok(R"("\uDBFF\uDFFF")").as_string(), "\xf4\x8f\xbf\xbf");
  EXPECT_EQ(parse_ok(R"("x\uD800\uDC00y")").as_string(), "x\xf0\x90\x80\x80y");
}

// A high surrogate followed by an escape that is not a low surrogate: the second
// escape is a character of its own and must not be lost.
TEST(JsonEscapes, UnpairedHighSurrogateKeepsTheNextEscape) {
  auto r = json::parse(R"("\uD800\u0041")");
  ASSERT_TRUE(std::holds_alternative<Value>(r));
  const std::string s = std::get<Value>(r).as_string();
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.back(), 'A');
}

TEST(JsonEscapes, BadEscapes) {
  expect_parse_error(R"("\x")", 3, "invalid escape");
  expect_parse_error(R"("\u12")", 3, "truncated \\u escape");
  expect_parse_error(R"("\u12G4")", 3, "invalid \\u escape");
  expect_parse_error(R"("\ud83d\u12")", 9, "truncated");
  expect_parse_error(R"("\ud83d\uZZZZ")", 9, "invalid \\u escape");
  expect_parse_error("\"a\nb\"", 2, "control character");
  expect_parse_error(std::string_view("\"\0\"", 3), 1, "control character");
  expect_parse_error(R"("abc)", 4, "unterminated string");
  expect_parse_error(R"("abc\)", 5, "unterminated string");
}

// ---- numbers ------------------------------------------------------------------------------

TEST(JsonNumbers, Integers) {
  EXPECT_EQ(parse_ok("0"), Value(0));
  EXPECT_EQ(parse_ok("-0").as_int(), 0);
  EXPECT_EQ(parse_ok("42"), Value(42));
  EXPECT_EQ(parse_ok("-17"), Value(-17));
  EXPECT_EQ(parse_ok("9223372036854775807"), Value(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(parse_ok("-9223372036854775808"), Value(std::numeric_limits<int64_t>::min()));
  EXPECT_TRUE(parse_ok("42").is_int());
  // Too large for 64 bits: kept as a double.
  Value big = parse_ok("18446744073709551616");
  EXPECT_FALSE(big.is_int());
  EXPECT_DOUBLE_EQ(big.as_double(), 18446744073709551616.0);
  EXPECT_EQ(json::dump(Value(uint32_t{4294967295u})), "4294967295");
}

TEST(JsonNumbers, UnsignedAbove2To63KeepTheirValue) {
  // Seeds are 64-bit unsigned ([state.launch]); they must not print as negatives.
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(json::dump(Value(top)), "18446744073709551615");
  EXPECT_EQ(json::dump(Value(uint64_t{1} << 63)), "9223372036854775808");
  Value back = parse_ok("18446744073709551615");
  EXPECT_TRUE(back.is_uint());
  EXPECT_FALSE(back.is_int());
  EXPECT_EQ(back.as_uint(), top);
  EXPECT_EQ(back, Value(top));
  // One representation per integer: small unsigned values are Int.
  EXPECT_EQ(Value(uint64_t{5}), Value(5));
  EXPECT_TRUE(Value(uint64_t{5}).is_int());
  EXPECT_FALSE(parse_ok("-1").is_uint());
  EXPECT_TRUE(parse_ok("0").is_uint());
}

TEST(JsonNumbers, DoublesAndExponents) {
  EXPECT_DOUBLE_EQ(parse_ok("3.25").as_double(), 3.25);
  EXPECT_DOUBLE_EQ(parse_ok("-0.5").as_double(), -0.5);
  EXPECT_DOUBLE_EQ(parse_ok("1e3").as_double(), 1000.0);
  EXPECT_DOUBLE_EQ(parse_ok("1E+3").as_double(), 1000.0);
  EXPECT_DOUBLE_EQ(parse_ok("25e-2").as_double(), 0.25);
  EXPECT_DOUBLE_EQ(parse_ok("-1.5e300").as_double(), -1.5e300);
  EXPECT_FALSE(parse_ok("1.0").is_int());
  EXPECT_FALSE(parse_ok("1e0").is_int());
  EXPECT_EQ(parse_ok("[1,2.5,-3e1]"), Value(Array{Value(1), Value(2.5), Value(-30.0)}));
  // Exact round trip of awkward doubles.
  for (double d : {0.1, 1.0 / 3.0, 1e-310, 1.7976931348623157e308, -2.2250738585072014e-308}) {
    EXPECT_EQ(parse_ok(json::dump(Value(d))).as_double(), d) << json::dump(Value(d));
  }
  // Non-finite doubles are written as null.
  EXPECT_EQ(json::dump(Value(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(json::dump(Value(std::nan(""))), "null");
}

TEST(JsonNumbers, Malformed) {
  expect_parse_error("-", 1, "invalid number");
  expect_parse_error("-a", 1, "invalid number");
  expect_parse_error("1.", 2, "invalid number");
  expect_parse_error("1.e5", 2, "invalid number");
  expect_parse_error("1e", 2, "invalid number");
  expect_parse_error("1e+", 3, "invalid number");
  expect_parse_error("01", 1, "unexpected data after the JSON value");
  expect_parse_error("+1", 0, "unexpected character");
  expect_parse_error(".5", 0, "unexpected character");
  expect_parse_error("1 2", 2, "unexpected data");
  expect_parse_error("0x10", 1, "unexpected data");
}

// ---- structural errors --------------------------------------------------------------------

TEST(JsonErrors, TruncatedInput) {
  expect_parse_error("", 0, "unexpected end of input");
  expect_parse_error("   ", 3, "unexpected end of input");
  expect_parse_error("[", 1, "unexpected end of input");
  expect_parse_error("[1", 2, "expected ',' or ']'");
  expect_parse_error("[1,", 3, "unexpected end of input");
  expect_parse_error("{", 1, "expected a string key");
  expect_parse_error(R"({"a")", 4, "expected ':'");
  expect_parse_error(R"({"a":)", 5, "unexpected end of input");
  expect_parse_error(R"({"a":1)", 6, "expected ',' or '}'");
  expect_parse_error("tru", 0, "invalid literal");
  expect_parse_error("nul", 0, "invalid literal");
}

TEST(JsonErrors, TrailingGarbage) {
  expect_parse_error("{} x", 3, "unexpected data after the JSON value");
  expect_parse_error("[1]]", 3, "unexpected data");
  expect_parse_error("null null", 5, "unexpected data");
  expect_parse_error("\"a\"\"b\"", 3, "unexpected data");
}

TEST(JsonErrors, BadStructure) {
  expect_parse_error("[1,]", 3, "unexpected character");
  expect_parse_error("[,1]", 1, "unexpected character");
  expect_parse_error(R"({"a":1,})", 7, "expected a string key");
  expect_parse_error(R"({a:1})", 1, "expected a string key");
  expect_parse_error(R"({"a" 1})", 5, "expected ':'");
  expect_parse_error("[1 2]", 3, "expected ',' or ']'");
  expect_parse_error("truex", 4, "unexpected data");
  expect_parse_error("'a'", 0, "unexpected character");
  expect_parse_error("\xef\xbb\xbf{}", 0, "unexpected character");
}

TEST(JsonErrors, DepthLimit) {
  std::string ok = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(parse_ok(ok).is_array());
  // Deep nesting is an error, not a stack overflow.
  const size_t n = 100000;
  auto r = json::parse(std::string(n, '['));
  auto* e = std::get_if<json::ParseError>(&r);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->message.find("nesting too deep"), std::string::npos) << e->message;
  EXPECT_LT(e->offset, n);
  std::string objs;
  for (size_t i = 0; i < n; ++i) objs += "{\"a\":";
  r = json::parse(objs);
  e = std::get_if<json::ParseError>(&r);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->message.find("nesting too deep"), std::string::npos) << e->message;
}

// ---- model::Outcome ---------------------------------------------------------------------------

model::Outcome trapped_outcome() {
  model::Outcome o;
  o.status = "trapped";
  o.event = model::Event{"mem_out_of_bounds", 3, 17, 5, 4096, "buf", std::nullopt, ""};
  o.steps = 123456789012ull;
  o.buffers.push_back({"out", "u32", {0, 1, 4294967295}});
  o.buffers.push_back({"neg", "i32", {-1, -2147483648, 2147483647}});
  o.buffers.push_back({"bytes", "u8", {}});
  return o;
}

void expect_same(const model::Outcome& a, const model::Outcome& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.event, b.event);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.buffers, b.buffers);
}

model::Outcome via_text(const model::Outcome& o, int indent) {
  const std::string text = json::dump(model::to_json(o), indent);
  model::Outcome back;
  std::string err;
  auto parsed = json::parse(text);
  EXPECT_TRUE(std::holds_alternative<Value>(parsed)) << text;
  if (!std::holds_alternative<Value>(parsed)) return back;
  EXPECT_TRUE(model::from_json(std::get<Value>(parsed), back, err)) << err << "\n" << text;
  return back;
}

TEST(ModelJson, OutcomeRoundTrip) {
  const model::Outcome o = trapped_outcome();
  expect_same(via_text(o, -1), o);
  expect_same(via_text(o, 2), o);
  model::Outcome done;
  done.status = "completed";
  done.steps = 0;
  expect_same(via_text(done, -1), done);
  // A non-lane event without a memory space.
  model::Outcome t;
  t.status = "trapped";
  t.event = model::Event{"mask_underflow", 0, 2, -1, 0, "", std::nullopt, ""};
  expect_same(via_text(t, -1), t);
  // The shape written.
  const Value v = model::to_json(o);
  ASSERT_NE(v.find("status"), nullptr);
  EXPECT_EQ(v.find("status")->as_string(), "trapped");
  ASSERT_NE(v.find("buffers"), nullptr);
  ASSERT_NE(v.find("buffers")->find("neg"), nullptr);
  EXPECT_EQ(v.find("buffers")->find("neg")->find("type")->as_string(), "i32");
  EXPECT_EQ(model::to_json(*t.event).find("lane"), nullptr);
  EXPECT_EQ(model::to_json(*t.event).find("space"), nullptr);
}

RC_GTEST_PROP(ModelProperty, OutcomeRoundTrip, ()) {
  model::Outcome o;
  o.status = *rc::gen::element<std::string>("completed", "trapped", "paused", "deadlock",
                                            "livelock", "step_limit");
  o.steps = *rc::gen::inRange<uint64_t>(0, uint64_t{1} << 62);
  if (*rc::gen::arbitrary<bool>()) {
    model::Event e;
    e.name = *rc::gen::arbitrary<std::string>();
    e.warp = *rc::gen::arbitrary<uint32_t>();
    e.pc = *rc::gen::arbitrary<uint32_t>();
    e.lane = *rc::gen::inRange<int32_t>(-1, 64);
    if (*rc::gen::arbitrary<bool>()) {
      e.space = "s" + *rc::gen::arbitrary<std::string>();
      e.addr = *rc::gen::arbitrary<uint32_t>();
    }
    o.event = e;
  }
  const int nb = *rc::gen::inRange(0, 4);
  for (int i = 0; i < nb; ++i) {
    model::Buffer b;
    b.name = "b" + std::to_string(i) + *rc::gen::arbitrary<std::string>();
    b.type = *rc::gen::element<std::string>("u8", "u16", "u32", "i32");
    b.values = *rc::gen::arbitrary<std::vector<int64_t>>();
    o.buffers.push_back(std::move(b));
  }
  auto parsed = json::parse(json::dump(model::to_json(o)));
  RC_ASSERT(std::holds_alternative<Value>(parsed));
  model::Outcome back;
  std::string err;
  RC_ASSERT(model::from_json(std::get<Value>(parsed), back, err));
  RC_ASSERT(back.status == o.status);
  RC_ASSERT(back.event == o.event);
  RC_ASSERT(back.steps == o.steps);
  RC_ASSERT(back.buffers == o.buffers);
}

void expect_rejected(std::string_view text, std::string_view substr) {
  SCOPED_TRACE(text);
  Value v = parse_ok(text);
  model::Outcome o;
  std::string err;
  EXPECT_FALSE(model::from_json(v, o, err));
  EXPECT_NE(err.find(substr), std::string::npos) << err;
}

TEST(ModelJson, RejectsMalformedShapes) {
  expect_rejected("[]", "outcome must be an object");
  expect_rejected("{}", "status");
  expect_rejected(R"({"status":1})", "status");
  expect_rejected(R"({"status":"trapped","event":5})", "event must be an object");
  expect_rejected(R"({"status":"trapped","event":{"warp":0,"pc":0}})", "name");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","pc":0}})", "missing 'warp'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":0}})", "missing 'pc'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":-1,"pc":0}})", "'warp'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":4294967296,"pc":0}})",
                  "'warp'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":0,"pc":1.5}})", "'pc'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":0,"pc":0,"lane":64}})",
                  "'lane'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":0,"pc":0,"lane":-1}})",
                  "'lane'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":0,"pc":0,"space":3}})",
                  "'space'");
  expect_rejected(R"({"status":"trapped","event":{"name":"x","warp":0,"pc":0,"space":"b"}})",
                  "missing 'addr'");
  expect_rejected(R"({"status":"completed","steps":-1})", "'steps'");
  expect_rejected(R"({"status":"completed","steps":"1"})", "'steps'");
  expect_rejected(R"({"status":"completed","buffers":[]})", "'buffers' must be an object");
  expect_rejected(R"({"status":"completed","buffers":{"b":{"values":[]}}})", "'type'");
  expect_rejected(R"({"status":"completed","buffers":{"b":{"type":"u8"}}})", "'values'");
  expect_rejected(R"({"status":"completed","buffers":{"b":{"type":"u8","values":{}}}})",
                  "'values'");
  expect_rejected(R"({"status":"completed","buffers":{"b":{"type":"u8","values":[1,2.5]}}})",
                  "not an integer");
  expect_rejected(R"({"status":"completed","buffers":{"b":{"type":"u8","values":["1"]}}})",
                  "not an integer");
  expect_rejected(R"({"status":"completed","buffers":{"b":3}})", "'type'");
}

TEST(ModelJson, AcceptsOptionalParts) {
  Value v = parse_ok(R"({"status":"deadlock","event":null})");
  model::Outcome o;
  std::string err;
  ASSERT_TRUE(model::from_json(v, o, err)) << err;
  EXPECT_EQ(o.status, "deadlock");
  EXPECT_FALSE(o.event.has_value());
  EXPECT_EQ(o.steps, 0u);
  EXPECT_TRUE(o.buffers.empty());
}

}  // namespace
}  // namespace simt
