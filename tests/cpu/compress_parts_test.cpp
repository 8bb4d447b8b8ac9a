// Parts (src/compress/parts.hpp): files cut into independently decompressible parts without
// decompressing them — zstd and lz4 frames, xz blocks and streams, gzip members that record their
// size (gutf8's 'G8', BGZF's 'BC') — decompress on several threads in any order, from a file
// (pread) or from memory, to the text in order; parts tile the file; sizes the headers record are
// held to; a member without a recorded size makes the rest one part; lying headers are errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <thread>

#include "compress/compressor.hpp"
#include "compress/parts.hpp"
#include "compress_support.hpp"
#include "gutf8/error.hpp"

namespace {

using namespace gutf8::test::compress;
using cz::format;
using cz::layout;

std::string compress_parts(format f, const std::vector<std::string>& pieces) {
  cz::part_compressor pc(f);
  std::vector<std::uint8_t> out;
  for (const std::string& p : pieces) pc.append(ubytes(p), out);
  return {out.begin(), out.end()};
}

// n pieces of the text cut inside characters.
std::vector<std::string> pieces(const std::string& in, std::size_t n) { return cut(in, inside_characters(in, n - 1)); }

cz::random_reader memory_reader(const std::string& bytes) {
  return [&bytes](std::span<std::uint8_t> b, std::uint64_t at) {
    if (at + b.size() > bytes.size()) throw gutf8::error(gutf8::errc::io_failure, "read past the end");
    std::copy_n(bytes.data() + at, b.size(), b.data());
  };
}

// The file's parts decompressed on 3 threads in a shuffled order, each read through pread or from
// memory, in pieces or into one buffer of its text size, then joined in order; checks each part's
// recorded text size.
std::string decompress_parts(format f, const std::string& file, const std::vector<cz::part>& parts,
                             std::size_t out_chunk) {
  temp_dir d;
  write_file(d.file("c"), file);
  const int fd = ::open(d.file("c").c_str(), O_RDONLY);
  std::vector<std::string> texts(parts.size());
  std::vector<std::size_t> order(parts.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  auto g = gutf8::test::rng(parts.size());
  std::shuffle(order.begin(), order.end(), g);
  std::atomic<std::size_t> next{0};
  std::atomic<int> failures{0};
  std::vector<std::exception_ptr> errors(3);
  const auto worker = [&](std::exception_ptr& error) {
    try {
      cz::decompressor dec;  // one a worker, reused for its parts
      for (std::size_t i; (i = next++) < order.size();) {
        const cz::part& p = parts[order[i]];
        // Read through pread, or from memory in out_chunk pieces, or (from memory) all at once.
        const std::size_t way = order[i] % 3;
        if (way == 0)
          dec.open(f, p, cz::pread_reader(fd));
        else
          dec.open(f, p, ubytes(file).subspan(p.offset, p.size));
        texts[order[i]] = drain(dec, way == 2 ? std::max<std::size_t>(p.text_size.value_or(0), 1) : out_chunk);
        if (p.text_size && *p.text_size != texts[order[i]].size()) ++failures;
      }
    } catch (...) {
      error = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (std::exception_ptr& e : errors) pool.emplace_back(worker, std::ref(e));
  }
  ::close(fd);
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  EXPECT_EQ(failures, 0) << "a part's text differs from its recorded size";
  std::string all;
  for (const std::string& t : texts) all += t;
  return all;
}

// Parts of the members layout tile the file; the first opens it, the last ends it.
void expect_tiling(const std::vector<cz::part>& parts, std::size_t file_size) {
  ASSERT_FALSE(parts.empty());
  std::uint64_t at = 0;
  for (const cz::part& p : parts) {
    EXPECT_EQ(p.holds, layout::members);
    EXPECT_EQ(p.offset, at);
    EXPECT_EQ(p.first, at == 0);
    at += p.size;
    EXPECT_EQ(p.last, at == file_size);
  }
  EXPECT_EQ(at, file_size);
}

class CompressParts : public testing::TestWithParam<format> {};

TEST_P(CompressParts, OurPartsSplitBackAndDecompressInAnyOrder) {
  const format f = GetParam();
  const std::string in = text(700001, 31);
  const std::string file = compress_parts(f, pieces(in, 9));
  for (std::uint64_t target : {1ull, 50000ull, 150001ull, 1ull << 30}) {
    SCOPED_TRACE(testing::Message() << "target " << target);
    const std::vector<cz::part> parts = cz::split(f, memory_reader(file), file.size(), target);
    if (f == format::bzip2) {
      EXPECT_EQ(parts.size(), 1u) << "bzip2 streams record no size";
    } else if (target == 1) {
      EXPECT_EQ(parts.size(), 9u) << "one part a member";
    } else if (target == 1ull << 30) {
      EXPECT_EQ(parts.size(), f == format::xz ? 9u : 1u) << "an xz part is one block";
    }
    for (const cz::part& p : parts) EXPECT_EQ(p.text_size.has_value(), f != format::bzip2);
    if (f != format::xz) expect_tiling(parts, file.size());
    EXPECT_EQ(decompress_parts(f, file, parts, 65537), in);
  }
}

TEST_P(CompressParts, EmptyFileAndEmptyParts) {
  const format f = GetParam();
  const std::string file = compress_parts(f, {"", text(1001, 32), "", ""});
  const auto parts = cz::split(f, memory_reader(file), file.size(), 1);
  EXPECT_EQ(decompress_parts(f, file, parts, 7), text(1001, 32));
  const std::string empty = compress_parts(f, {""});
  EXPECT_EQ(decompress_parts(f, empty, cz::split(f, memory_reader(empty), empty.size(), 1), 7), "");
}

TEST_P(CompressParts, TheToolsOwnFiles) {
  const format f = GetParam();
  const std::string in = text(400009, 33);
  std::string extra;
  if (f == format::xz) extra = "--block-size=60000";
  if (f == format::zstd) extra = "--no-check";
  const std::string file = tool_compress(f, in, extra);
  const std::vector<cz::part> parts = cz::split(f, memory_reader(file), file.size(), 30000);
  if (f == format::xz)
    EXPECT_GE(parts.size(), 3u) << "blocks of 60000 bytes of text, about 30000 compressed";
  else
    EXPECT_EQ(parts.size(), 1u);
  EXPECT_EQ(decompress_parts(f, file, parts, 4093), in);
}

INSTANTIATE_TEST_SUITE_P(Formats, CompressParts, testing::ValuesIn(all_formats), param_name);

TEST(CompressPartsGzip, BgzfMembersSplit) {
  const std::string in = text(300007, 34);
  temp_dir d;
  write_file(d.file("in"), in);
  const run_result bgzip = shell("bgzip -c < " + d.file("in").string());
  ASSERT_EQ(bgzip.status, 0) << "bgzip (Debian package tabix) is needed";
  const std::string& file = bgzip.out;
  const std::vector<cz::part> parts = cz::split(format::gzip, memory_reader(file), file.size(), 1);
  EXPECT_GE(parts.size(), 300007u / 65536) << "BGZF members hold at most 64 KiB";
  expect_tiling(parts, file.size());
  for (const cz::part& p : parts) EXPECT_TRUE(p.text_size.has_value());
  EXPECT_EQ(decompress_parts(format::gzip, file, parts, 65537), in);
}

TEST(CompressPartsGzip, AMemberWithoutSizeMakesTheRestOnePart) {
  const std::string a = text(50021, 35), b = text(20011, 36), c = text(30011, 37);
  const std::string file = compress_parts(format::gzip, pieces(a, 3)) + tool_compress(format::gzip, b) +
                           compress_parts(format::gzip, pieces(c, 2));
  const std::vector<cz::part> parts = cz::split(format::gzip, memory_reader(file), file.size(), 1);
  ASSERT_EQ(parts.size(), 4u);
  expect_tiling(parts, file.size());
  EXPECT_FALSE(parts[3].text_size) << "gzip's own member and what follows";
  EXPECT_EQ(decompress_parts(format::gzip, file, parts, 7), a + b + c);
}

TEST(CompressPartsGzip, TrailingGarbageGoesWithTheLastPart) {
  const std::string in = text(90001, 38);
  const std::string members = compress_parts(format::gzip, pieces(in, 3));
  const std::string file = members + "garbage";
  const std::vector<cz::part> parts = cz::split(format::gzip, memory_reader(file), file.size(), 1);
  ASSERT_EQ(parts.size(), 4u);
  expect_tiling(parts, file.size());
  EXPECT_EQ(decompress_parts(format::gzip, file, parts, 4093), in);
  cz::decompressor d;
  d.open(format::gzip, parts.back(), ubytes(file).subspan(parts.back().offset));
  EXPECT_EQ(drain(d, 7), "");
  EXPECT_EQ(d.ignored_from(), members.size());
}

// The G8 subfield's member size sits at bytes 16..19, its text size at 20..23; the header CRC at
// 24..25 (FHCRC) is made to match, as a writer that lied would.
void put_le32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) s[at + k] = static_cast<char>(v >> (8 * k));
}
void fix_header_crc(std::string& s) {
  const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data()), 24)) & 0xFFFF;
  s[24] = static_cast<char>(crc);
  s[25] = static_cast<char>(crc >> 8);
}

TEST(CompressPartsGzip, LyingSizesAreCorruptData) {
  const std::string in = text(60013, 39);
  const std::string good = compress_parts(format::gzip, pieces(in, 3));
  const std::uint32_t first = static_cast<std::uint8_t>(good[16]) | static_cast<std::uint8_t>(good[17]) << 8 |
                              static_cast<std::uint8_t>(good[18]) << 16 |
                              static_cast<std::uint32_t>(static_cast<std::uint8_t>(good[19])) << 24;
  for (const auto& [field, value] :
       {std::pair{16, first - 1}, {16, first + 1}, {16, first + 9}, {20, 3u}, {20, 30000u}}) {
    SCOPED_TRACE(testing::Message() << "field " << field << " = " << value);
    std::string bad = good;
    put_le32(bad, static_cast<std::size_t>(field), value);
    fix_header_crc(bad);
    ASSERT_EQ(tool_decompress(format::gzip, bad).text, in) << "gunzip ignores the subfield";
    const std::vector<cz::part> parts = cz::split(format::gzip, memory_reader(bad), bad.size(), 1);
    try {
      decompress_parts(format::gzip, bad, parts, 4093);
      ADD_FAILURE() << "no error";
    } catch (const gutf8::error& e) {
      EXPECT_EQ(e.code(), gutf8::errc::io_failure);
      EXPECT_TRUE(std::string(e.what()).starts_with("corrupt gzip data at compressed byte ")) << e.what();
    }
  }
}

TEST(CompressPartsGzip, FlippedBytesInSizedMembersAsGunzipSays) {
  // Parts decoded whole (libdeflate) or streamed (zlib) agree with gunzip on every damaged file.
  const std::string in = text(30011, 47);
  const std::string good = compress_parts(format::gzip, pieces(in, 3));
  auto g = gutf8::test::rng(48);
  for (std::size_t at = 0; at < good.size(); at += 1 + at / 8) {
    SCOPED_TRACE(testing::Message() << "byte " << at << " flipped");
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ (1 + g() % 255));
    const tool_verdict oracle = tool_decompress(format::gzip, bad);
    try {
      const auto parts = cz::split(format::gzip, memory_reader(bad), bad.size(), 1);
      EXPECT_EQ(decompress_parts(format::gzip, bad, parts, 4093), oracle.text);
      EXPECT_TRUE(oracle.ok) << "accepted what gunzip refuses";
    } catch (const gutf8::error& e) {
      EXPECT_FALSE(oracle.ok) << "refused what gunzip accepts: " << e.what();
    }
  }
}

TEST(CompressPartsZstd, ACorruptFrameNamesItsFilePosition) {
  const std::string in = text(200003, 40);
  std::string file = compress_parts(format::zstd, pieces(in, 4));
  const std::vector<cz::part> parts = cz::split(format::zstd, memory_reader(file), file.size(), 1);
  ASSERT_EQ(parts.size(), 4u);
  const cz::part& third = parts[2];
  const std::size_t at = third.offset + third.size / 2;
  file[at] = static_cast<char>(file[at] ^ 0x55);
  cz::decompressor d;
  d.open(format::zstd, third, ubytes(file).subspan(third.offset, third.size));
  try {
    drain(d, 65537);
    ADD_FAILURE() << "no error";
  } catch (const gutf8::error& e) {
    const std::string what = e.what();
    const std::uint64_t named = std::stoull(what.substr(what.find("byte ") + 5));
    EXPECT_GE(named, third.offset) << what;
    EXPECT_LE(named, third.offset + third.size) << what;
  }
}

TEST(CompressPartsZstd, SkippableFramesFoldIntoParts) {
  const std::string a = text(30011, 41), b = text(20011, 42);
  const std::string skip{'\x5e', '\x2a', '\x4d', '\x18', '\x02', 0, 0, 0, 'h', 'i'};
  const std::string file = skip + compress_parts(format::zstd, {a}) + skip + compress_parts(format::zstd, {b}) + skip;
  for (std::uint64_t target : {1ull, 1ull << 20}) {
    const auto parts = cz::split(format::zstd, memory_reader(file), file.size(), target);
    expect_tiling(parts, file.size());
    EXPECT_EQ(decompress_parts(format::zstd, file, parts, 4093), a + b);
  }
}

TEST(CompressPartsXz, ABlockIsHeldToTheIndexSizes) {
  const std::string in = text(300007, 43);
  const std::string file = tool_compress(format::xz, in, "--block-size=50000");
  const std::vector<cz::part> parts = cz::split(format::xz, memory_reader(file), file.size(), 1);
  ASSERT_GE(parts.size(), 6u);
  for (const cz::part& p : parts) EXPECT_EQ(p.holds, layout::xz_block);
  cz::part wrong = parts[2];
  *wrong.text_size += 1;
  cz::decompressor d;
  d.open(format::xz, wrong, ubytes(file).subspan(wrong.offset, wrong.size));
  EXPECT_THROW(drain(d, 4093), gutf8::error);
  cz::part short_part = parts[2];
  short_part.size -= 1;
  d.open(format::xz, short_part, ubytes(file).subspan(short_part.offset, short_part.size));
  EXPECT_THROW(drain(d, 4093), gutf8::error);
  cz::part two_blocks = parts[2];
  two_blocks.size += parts[3].size;
  *two_blocks.text_size += *parts[3].text_size;
  d.open(format::xz, two_blocks, ubytes(file).subspan(two_blocks.offset, two_blocks.size));
  EXPECT_THROW(drain(d, 4093), gutf8::error) << "a part is one block";
}

TEST(CompressPartsXz, ACorruptIndexFallsBackToOnePart) {
  const std::string in = text(100003, 44);
  std::string file = tool_compress(format::xz, in, "--block-size=30000");
  file[file.size() - 20] = static_cast<char>(file[file.size() - 20] ^ 0x21);  // inside the index
  const std::vector<cz::part> parts = cz::split(format::xz, memory_reader(file), file.size(), 1);
  ASSERT_EQ(parts.size(), 1u);
  expect_tiling(parts, file.size());
  EXPECT_THROW(decompress_parts(format::xz, file, parts, 4093), gutf8::error) << "xz -d refuses it too";
  EXPECT_FALSE(tool_decompress(format::xz, file).ok);
}

TEST(CompressPartsLz4, FramesFromTheTool) {
  const std::string a = text(100003, 45), b = text(50021, 46);
  const std::string file = tool_compress(format::lz4, a, "--content-size") + tool_compress(format::lz4, b, "-BD -B4");
  const auto parts = cz::split(format::lz4, memory_reader(file), file.size(), 1);
  ASSERT_EQ(parts.size(), 2u);
  expect_tiling(parts, file.size());
  EXPECT_EQ(parts[0].text_size, a.size()) << "--content-size";
  EXPECT_FALSE(parts[1].text_size);
  EXPECT_EQ(decompress_parts(format::lz4, file, parts, 65537), a + b);
}

}  // namespace
