// zstd frames decoded at once (a part in memory whose frames' content sizes, or their block bounds,
// fit the output: ZSTD_decompressDCtx straight into it) and streamed (anything else): frames with
// and without their content size, larger and smaller than libzstd's 128 KiB blocks and than the
// output buffer, empty, skippable, concatenated in mixed kinds, decode to what the zstd tool gives
// whatever the output size; a frame whose content-size field lies is corrupt data at a compressed
// position, as the tool finds it corrupt.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "compress/parts.hpp"
#include "compress_support.hpp"
#include "gutf8/error.hpp"

namespace {

using namespace gutf8::test::compress;
using cz::format;

// One frame of text by the zstd tool: with its content size (from a named file) or without (a pipe).
std::string zstd_frame(const std::string& text, bool sized) {
  temp_dir d;
  write_file(d.file("in"), text);
  const std::string in = d.file("in").string();
  const run_result r = shell(sized ? "zstd -q -c " + in : "cat " + in + " | zstd -q -c");
  EXPECT_EQ(r.status, 0);
  return r.out;
}

// RFC 8878 3.1.1.1: where a frame's Frame_Content_Size field lies and how many bytes it has.
struct fcs_field {
  std::size_t at = 0, size = 0;
};
fcs_field content_size_field(const std::string& frame) {
  const auto fhd = static_cast<unsigned char>(frame.at(4));
  const bool single = fhd & 0x20;
  constexpr std::size_t dict_bytes[] = {0, 1, 2, 4}, fcs_bytes[] = {0, 2, 4, 8};
  const std::size_t size = (fhd >> 6) == 0 && single ? 1 : fcs_bytes[fhd >> 6];
  return {5 + (single ? 0 : 1) + dict_bytes[fhd & 3], size};
}
bool records_size(const std::string& frame) { return content_size_field(frame).size > 0; }

// The frame with its content-size field set to n (a 2-byte field counts from 256).
std::string with_content_size(std::string frame, std::uint64_t n) {
  const fcs_field f = content_size_field(frame);
  EXPECT_GT(f.size, 0u);
  if (f.size == 2) n -= 256;
  for (std::size_t k = 0; k < f.size; ++k) frame[f.at + k] = static_cast<char>(n >> (8 * k));
  return frame;
}

std::string skippable(const std::string& payload) {
  std::string s{'\x53', '\x2a', '\x4d', '\x18'};
  for (int k = 0; k < 4; ++k) s += static_cast<char>(payload.size() >> (8 * k));
  return s + payload;
}

// The decompressor over compressed bytes held in memory, read `out` bytes at a time.
std::string in_memory(const std::string& c, std::size_t out, std::optional<std::uint64_t>* room = nullptr) {
  cz::decompressor d;
  d.open(format::zstd, whole(c.size()), ubytes(c));
  if (room != nullptr) *room = d.whole_text();
  std::string text = drain(d, out);
  EXPECT_EQ(d.compressed_position(), c.size());
  return text;
}

// What the tool gives, and the same through the decompressor at once (an output that holds the
// text), in output buffers around libzstd's block size and smaller, and streamed in odd chunks.
void expect_decodes(const std::string& c, const std::string& want) {
  ASSERT_EQ(tool_decompress(format::zstd, c).text, want) << "the zstd tool";
  std::optional<std::uint64_t> room;
  EXPECT_EQ(in_memory(c, want.size() + 1, &room), want) << "at once";
  ASSERT_TRUE(room.has_value());
  EXPECT_GE(*room, want.size());
  for (const std::size_t out : {std::size_t{131073}, std::size_t{131071}, std::size_t{4093}})
    EXPECT_EQ(in_memory(c, out), want) << "output buffers of " << out;
  EXPECT_EQ(decompress(format::zstd, c, 4093, 65537), want) << "streamed";
}

constexpr std::size_t sizes[] = {1, 4093, 131071, 131073, 300007};

TEST(CompressZstd, FramesWithTheirContentSize) {
  for (const std::size_t n : sizes) {
    SCOPED_TRACE(n);
    const std::string t = text(n, n), c = zstd_frame(t, true);
    ASSERT_TRUE(records_size(c));
    expect_decodes(c, t);
    std::optional<std::uint64_t> room;
    in_memory(c, n + 1, &room);
    EXPECT_EQ(room, n) << "the recorded size is the room";
  }
}

TEST(CompressZstd, FramesWithoutTheirContentSize) {
  for (const std::size_t n : sizes) {
    SCOPED_TRACE(n);
    const std::string t = text(n, n + 1), c = zstd_frame(t, false);
    ASSERT_FALSE(records_size(c));
    expect_decodes(c, t);
  }
}

TEST(CompressZstd, EmptyFrames) {
  for (const bool sized : {true, false}) {
    const std::string c = zstd_frame("", sized);
    expect_decodes(c, "");
    expect_decodes(c + c + c, "");
  }
}

TEST(CompressZstd, SkippableFramesAlone) {
  const std::string c = skippable("meta") + skippable("") + skippable(random_bytes(70001, 3));
  ASSERT_TRUE(tool_decompress(format::zstd, c).ok);
  for (const std::size_t out : {std::size_t{1}, std::size_t{4093}}) EXPECT_EQ(in_memory(c, out), "");
}

// Sized, unsized, empty and skippable frames in one file, characters cut across frames.
TEST(CompressZstd, ConcatenatedFramesOfMixedKinds) {
  const std::string t = text(700001, 5);
  const auto pieces = cut(t, inside_characters(t, 5));
  ASSERT_EQ(pieces.size(), 6u);
  std::string c = skippable("head");
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    c += zstd_frame(pieces[k], k % 2 == 0);
    if (k == 2) c += zstd_frame("", true) + skippable(random_bytes(1001, 6)) + zstd_frame("", false);
  }
  expect_decodes(c, t);
}

TEST(CompressZstd, AWrongContentSizeIsCorrupt) {
  for (const std::size_t n : {std::size_t{5003}, std::size_t{131073}}) {
    const std::string t = text(n, 7), good = zstd_frame(t, true);
    for (const std::uint64_t lie : {n - 1, n + 1, n + 1000}) {
      SCOPED_TRACE(testing::Message() << n << " bytes recorded as " << lie);
      const std::string bad = with_content_size(good, lie);
      ASSERT_FALSE(tool_decompress(format::zstd, bad).ok) << "the zstd tool finds it corrupt";
      for (const std::size_t out : {std::size_t{n + 1001}, std::size_t{4093}}) {
        try {
          in_memory(bad, out);
          ADD_FAILURE() << "no error with output buffers of " << out;
        } catch (const gutf8::error& e) {
          EXPECT_EQ(e.code(), gutf8::errc::io_failure);
          const std::string why = e.what(), head = "corrupt zstd data at compressed byte ";
          ASSERT_EQ(why.rfind(head, 0), 0u) << why;
          EXPECT_LE(std::stoull(why.substr(head.size())), bad.size()) << why;
        }
      }
      EXPECT_THROW(decompress(format::zstd, bad, 4093, 65537), gutf8::error) << "streamed";
    }
  }
}

// The splitter bounds the text of frames that do not record it by their blocks (what lets a worker
// take such a part whole), and gives the exact size where every frame records it.
TEST(CompressZstd, PartsBoundTheTextOfFramesWithoutTheirSize) {
  const std::string t = text(300007, 9), u = text(4093, 10);
  const auto split = [](const std::string& c) {
    const cz::random_reader read = [&c](std::span<std::uint8_t> b, std::uint64_t at) {
      ASSERT_LE(at + b.size(), c.size());
      std::copy_n(c.data() + at, b.size(), b.data());
    };
    return cz::split(format::zstd, read, c.size(), std::uint64_t{1} << 30);
  };
  const std::string unsized = zstd_frame(t, false) + skippable("x") + zstd_frame(u, false);
  const auto parts = split(unsized);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_FALSE(parts[0].text_size);
  ASSERT_TRUE(parts[0].text_bound);
  EXPECT_GE(*parts[0].text_bound, t.size() + u.size());
  EXPECT_LE(*parts[0].text_bound, 4u * 131072) << "three blocks and one, of 128 KiB at most";
  const auto sized = split(zstd_frame(t, true) + skippable("x") + zstd_frame(u, true));
  ASSERT_EQ(sized.size(), 1u);
  EXPECT_EQ(sized[0].text_size, t.size() + u.size());
  EXPECT_EQ(sized[0].most_text(), t.size() + u.size());
  const auto mixed = split(zstd_frame(t, true) + zstd_frame(u, false));
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_FALSE(mixed[0].text_size);
  EXPECT_GE(mixed[0].most_text().value_or(0), t.size() + u.size());
}

}  // namespace
