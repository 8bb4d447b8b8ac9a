// UTF-32BE and UTF-16LE/BE (decode_to, encode_from, stream_config::form): byte-exact with CPython's
// codecs under strict, replace and ignore (drop), the first error's offset as CPython's error start,
// and the same for any chunking. python3 computes the expected bytes from the same inputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "check.hpp"

namespace {

using namespace gutf8;
using namespace gutf8::test;
namespace fs = std::filesystem;

constexpr text_form forms[] = {text_form::utf32le, text_form::utf32be, text_form::utf16le, text_form::utf16be};
constexpr error_policy policies[] = {error_policy::strict, error_policy::replace, error_policy::drop};

const char* codec_of(text_form f) {
  switch (f) {
    case text_form::utf32le: return "utf-32-le";
    case text_form::utf32be: return "utf-32-be";
    case text_form::utf16le: return "utf-16-le";
    case text_form::utf16be: return "utf-16-be";
  }
  return "";
}
const char* errors_of(error_policy p) {
  return p == error_policy::strict ? "strict" : p == error_policy::replace ? "replace" : "ignore";
}

// For each line "OP CODEC ERRORS IN OUT": OUT holds the expected bytes, then "\n#START" (the first
// error's start, -1 without one) on its own last line.
constexpr const char* oracle_script = R"(import sys
for line in open(sys.argv[1]):
    op, codec, errors, src, dst = line.split()
    data = open(src, 'rb').read()
    start = -1
    source, target = ('utf-8', codec) if op == 'decode' else (codec, 'utf-8')
    try:
        out = data.decode(source, errors).encode(target)
    except UnicodeDecodeError as e:
        start = e.start
        out = data[:e.start].decode(source).encode(target)
    open(dst, 'wb').write(out + b'\n#' + str(start).encode())
)";

// Units in `form` from a list of 16-bit units (UTF-16) or 32-bit values (UTF-32).
std::string serialize(const std::vector<std::uint32_t>& units, text_form form) {
  const bool wide = form == text_form::utf32le || form == text_form::utf32be;
  const bool big = form == text_form::utf32be || form == text_form::utf16be;
  const int n = wide ? 4 : 2;
  std::string out;
  for (const std::uint32_t u : units)
    for (int i = 0; i < n; ++i) out += static_cast<char>(u >> (8 * (big ? n - 1 - i : i)));
  return out;
}

// Random UTF-16 or UTF-32 text with every kind of defect: lone and reversed surrogates, values
// above U+10FFFF, a high surrogate or a ragged tail at the end.
std::string random_form_text(std::mt19937_64& g, text_form form, std::size_t count, double defects) {
  const bool wide = form == text_form::utf32le || form == text_form::utf32be;
  std::vector<std::uint32_t> units;
  std::bernoulli_distribution defect(defects);
  while (units.size() < count) {
    if (!defect(g)) {
      const char32_t c = random_scalar(g);
      if (wide || c < 0x10000) {
        units.push_back(c);
      } else {
        units.push_back(0xD800 + ((c - 0x10000) >> 10));
        units.push_back(0xDC00 + ((c - 0x10000) & 0x3FF));
      }
      continue;
    }
    switch (pick(g, 0, 4)) {
      case 0: units.push_back(pick(g, 0xD800, 0xDBFF)); break;  // lone high
      case 1: units.push_back(pick(g, 0xDC00, 0xDFFF)); break;  // lone low
      case 2: units.push_back(0xDC00), units.push_back(0xD800); break;  // reversed pair
      case 3: units.push_back(wide ? pick(g, 0x110000, 0xFFFFFFFF) : pick(g, 0xD800, 0xDBFF)); break;
      default: units.push_back('\n'); break;
    }
  }
  std::string text = serialize(units, form);
  if (defect(g)) text += std::string(pick(g, 1, wide ? 3 : 1), '\x41');  // ragged or odd tail
  return text;
}

struct form_case {
  std::string name;  // file name stem
  operation op;
  text_form form;
  error_policy policy;
  std::string input;
};

class forms_oracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
    char pattern[] = "/tmp/gutf8-forms-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  static void put(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  }
  static std::string get(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs the oracle over all cases; returns, per case, the expected bytes and first error start.
  std::vector<std::pair<std::string, long long>> expected(const std::vector<form_case>& cases) {
    put(dir_ / "oracle.py", oracle_script);
    std::string list;
    for (const auto& c : cases) {
      put(dir_ / (c.name + ".in"), c.input);
      list += std::string(c.op == operation::decode ? "decode " : "encode ") + codec_of(c.form) + ' ' +
              errors_of(c.policy) + ' ' + (dir_ / (c.name + ".in")).string() + ' ' +
              (dir_ / (c.name + ".out")).string() + '\n';
    }
    put(dir_ / "cases.txt", list);
    const std::string command = "python3 " + (dir_ / "oracle.py").string() + ' ' + (dir_ / "cases.txt").string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::vector<std::pair<std::string, long long>> out;
    for (const auto& c : cases) {
      const std::string text = get(dir_ / (c.name + ".out"));
      const auto mark = text.rfind("\n#");
      out.emplace_back(text.substr(0, mark), std::stoll(text.substr(mark + 2)));
    }
    return out;
  }

  fs::path dir_;
};

std::string run_one_shot(const form_case& c, summary& info) {
  if (c.op == operation::decode) return decode_to(c.input, c.form, c.policy, &info);
  return str(encode_from(c.input, c.form, c.policy, &info));
}

// The same through a stream fed `chunk` bytes at a time.
std::string run_streamed(const form_case& c, std::size_t chunk, summary& info) {
  stream_config config{c.op, c.policy, false, {}};
  config.form = c.form;
  stream st(config);
  std::vector<std::byte> out;
  const auto all = bytes(c.input);
  for (std::size_t i = 0; i < all.size(); i += chunk) st.feed(all.subspan(i, std::min(chunk, all.size() - i)), out);
  st.finish(out);
  info = st.stats().input;
  return {reinterpret_cast<const char*>(out.data()), out.size()};
}

TEST_F(forms_oracle, ByteExactWithCPythonForEveryFormPolicyAndChunking) {
  auto g = rng(2616);
  std::vector<form_case> cases;
  for (const text_form form : forms) {
    for (const error_policy policy : policies) {
      for (const std::size_t size : {0u, 1u, 2u, 3u, 5u, 64u, 257u, 4099u}) {
        for (const double defects : {0.0, 0.05, 0.5}) {
          const std::string tag = std::to_string(cases.size());
          cases.push_back({"d" + tag, operation::decode, form, policy, random_text(g, size, defects)});
          cases.push_back({"e" + tag, operation::encode, form, policy, random_form_text(g, form, size, defects)});
        }
      }
    }
  }
  // The end-of-input cases one by one: lone high at the end, high and one byte, one odd byte.
  for (const error_policy policy : policies) {
    for (const char* tail : {"\x3D\xD8", "\x3D\xD8\x41", "\x41", "\x00\xDC\x3D\xD8"}) {
      const std::string tag = std::to_string(cases.size());
      cases.push_back({"t" + tag, operation::encode, text_form::utf16le, policy, std::string("a\0", 2) + tail});
    }
  }
  const auto want = expected(cases);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const form_case& c = cases[i];
    SCOPED_TRACE(testing::Message() << c.name << ' ' << (c.op == operation::decode ? "decode " : "encode ")
                                    << codec_of(c.form) << ' ' << errors_of(c.policy) << " size " << c.input.size());
    summary info;
    const std::string got = run_one_shot(c, info);
    const auto& [bytes_wanted, start] = want[i];
    if (c.policy == error_policy::strict && start >= 0) {
      // Strict: stops at the first error unit; what was written before it is the valid prefix.
      EXPECT_TRUE(bytes_wanted.starts_with(got)) << "not a prefix of the oracle's output";
      ASSERT_TRUE(info.first_error.has_value());
      EXPECT_EQ(info.first_error->offset, std::uint64_t(start));
    } else {
      EXPECT_EQ(got, bytes_wanted);
      if (c.policy == error_policy::strict) {
        EXPECT_FALSE(info.first_error.has_value());
      }
    }
    for (const std::size_t chunk : {1u, 2u, 3u, 5u, 7u, 64u}) {
      summary streamed_info;
      EXPECT_EQ(run_streamed(c, chunk, streamed_info), got) << "chunk " << chunk;
      EXPECT_EQ(streamed_info, info) << "chunk " << chunk;
    }
  }
}

TEST(Forms, ErrorReasonsAndPositionsInTheInputsTerms) {
  summary info;
  // "a\nb" then a lone low surrogate: byte 6, line 2, column 2 (code points).
  const std::string lone = serialize({'a', '\n', 'b', 0xDC00, 'c'}, text_form::utf16be);
  EXPECT_EQ(str(encode_from(lone, text_form::utf16be, error_policy::replace, &info)), "a\nb\xEF\xBF\xBD" "c");
  ASSERT_TRUE(info.first_error);
  EXPECT_EQ(*info.first_error, (error_position{6, 2, 2, error_kind::unpaired_surrogate}));
  EXPECT_EQ(info.bytes, 10u);
  // A pair counts one column.
  const std::string pair = serialize({0xD83D, 0xDE00, 0xD800}, text_form::utf16le);
  encode_from(pair, text_form::utf16le, error_policy::drop, &info);
  EXPECT_EQ(*info.first_error, (error_position{4, 1, 2, error_kind::truncated_at_end}));
  encode_from(pair.substr(0, 4) + "x", text_form::utf16le, error_policy::drop, &info);
  EXPECT_EQ(*info.first_error, (error_position{4, 1, 2, error_kind::odd_length}));
  const std::string be32 = serialize({'x', 0x110000, 'y'}, text_form::utf32be) + "zz";
  EXPECT_EQ(str(encode_from(be32, text_form::utf32be, error_policy::replace, &info)),
            "x\xEF\xBF\xBDy\xEF\xBF\xBD");
  EXPECT_EQ(*info.first_error, (error_position{4, 1, 2, error_kind::too_large}));
  EXPECT_EQ(info.errors, 2u);
}

TEST(Forms, DecodeWithABom) {
  EXPECT_EQ(decode_to("a", text_form::utf16le, error_policy::strict, nullptr, {}, true), std::string("\xFF\xFE" "a\0", 4));
  EXPECT_EQ(decode_to("a", text_form::utf16be, error_policy::strict, nullptr, {}, true), std::string("\xFE\xFF\0a", 4));
  EXPECT_EQ(decode_to("", text_form::utf32be, error_policy::strict, nullptr, {}, true), std::string("\0\0\xFE\xFF", 4));
  EXPECT_EQ(decode_to("", text_form::utf32le, error_policy::strict, nullptr, {}, true), std::string("\xFF\xFE\0\0", 4));
  // A BOM in the input is the character U+FEFF (explicit byte orders, as iconv and CPython).
  EXPECT_EQ(str(encode_from(std::string("\xFF\xFE" "a\0", 4), text_form::utf16le, error_policy::strict)),
            "\xEF\xBB\xBF" "a");
  // Streamed: the BOM once, before the first chunk's output.
  stream_config c{operation::decode, error_policy::replace, false, {}};
  c.form = text_form::utf16be;
  c.bom = true;
  stream st(c);
  std::vector<std::byte> out;
  st.feed(bytes("\xC3"), out);
  st.feed(bytes("\xA9"), out);
  st.finish(out);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(out.data()), out.size()), std::string("\xFE\xFF\0\xE9", 4));
}

}  // namespace
