// gzip: zlib streams members in and out; libdeflate compresses a part into one member whose header
// records the member's size (the 'G8' extra subfield, which gunzip skips as RFC 1952 says), so that
// gutf8's own output splits without inflating, as BGZF's 'BC' subfield lets BGZF files split. The
// header carries its CRC (FHCRC): gunzip and the splitter both refuse a damaged size.
#include <libdeflate.h>
#include <zlib.h>

#include <array>
#include <cstring>
#include <string>

#include "compress/codecs.hpp"
#include "compress/magic.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

namespace {

constexpr int gzip_window_bits = 16 + MAX_WBITS;  // zlib: a gzip wrapper, not a zlib one
constexpr std::uint8_t flag_header_crc = 0x02;    // FLG.FHCRC
constexpr std::uint8_t flag_extra = 0x04;         // FLG.FEXTRA
constexpr std::uint8_t flag_name_comment = 0x18;  // FLG.FNAME, FLG.FCOMMENT
constexpr std::uint8_t os_unix = 3;               // what gzip writes on Linux
// The 'G8' subfield: the member's size in bytes, then its text's size (both 32-bit little-endian).
constexpr std::array<std::uint8_t, 2> g8_id{'G', '8'};
constexpr std::size_t g8_length = 8;
constexpr std::array<std::uint8_t, 2> bgzf_id{'B', 'C'};         // BGZF: the member's size less one (16 bits)
constexpr std::size_t header_size = 10 + 2 + 4 + g8_length + 2;  // fixed part, XLEN, subfield, CRC16
constexpr std::size_t trailer_size = 8;                          // CRC-32, ISIZE

void put_le32(std::uint8_t* p, std::uint64_t v) noexcept {
  for (int k = 0; k < 4; ++k) p[k] = static_cast<std::uint8_t>(v >> (8 * k));
}
// FHCRC: the low 16 bits of the CRC-32 of the header's bytes before it.
std::uint32_t header_crc(std::span<const std::uint8_t> header) noexcept {
  return libdeflate_crc32(0, header.data(), header.size()) & 0xFFFFu;
}
std::uint32_t le16(const std::uint8_t* p) noexcept { return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8; }

class gzip_decoder final : public frame_decoder {
 public:
  gzip_decoder() {
    if (inflateInit2(&z_, gzip_window_bits) != Z_OK) throw error(errc::out_of_memory, "zlib: inflateInit2 failed");
  }
  gzip_decoder(const gzip_decoder&) = delete;
  gzip_decoder& operator=(const gzip_decoder&) = delete;
  ~gzip_decoder() override { inflateEnd(&z_); }

  step decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool, std::uint64_t at) override {
    in = clamp(in);
    out = clamp(out);
    z_.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const-correct; it only reads
    z_.avail_in = static_cast<uInt>(in.size());
    z_.next_out = out.data();
    z_.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z_, Z_NO_FLUSH);
    const step s{in.size() - z_.avail_in, out.size() - z_.avail_out, rc == Z_STREAM_END};
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR)
      throw_corrupt(format::gzip, at + s.consumed, z_.msg ? z_.msg : "invalid deflate data");
    if (rc == Z_MEM_ERROR) throw error(errc::out_of_memory, "zlib: out of memory");
    return s;  // Z_OK, or Z_BUF_ERROR: no progress without more input
  }
  void restart() override { inflateReset(&z_); }

  // libdeflate decodes a whole member about 3x as fast as zlib streams it.
  std::optional<std::size_t> decode_whole(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) override {
    if (!whole_) whole_.reset(libdeflate_alloc_decompressor());
    if (!whole_ || in.empty()) return std::nullopt;  // no member at all: the streaming path says so
    std::size_t produced = 0;
    while (!in.empty()) {
      std::size_t took = 0, gave = 0;
      if (libdeflate_gzip_decompress_ex(whole_.get(), in.data(), in.size(), out.data() + produced,
                                        out.size() - produced, &took, &gave) != LIBDEFLATE_SUCCESS)
        return std::nullopt;
      in = in.subspan(took);
      produced += gave;
    }
    return produced;
  }

 private:
  struct free_decompressor {
    void operator()(libdeflate_decompressor* d) const noexcept { libdeflate_free_decompressor(d); }
  };
  z_stream z_{};
  std::unique_ptr<libdeflate_decompressor, free_decompressor> whole_;
};

class gzip_encoder final : public frame_encoder {
 public:
  explicit gzip_encoder(int level) {
    if (deflateInit2(&z_, level, Z_DEFLATED, gzip_window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw error(errc::invalid_argument, "zlib: deflateInit2 failed (gzip level " + std::to_string(level) + ")");
  }
  gzip_encoder(const gzip_encoder&) = delete;
  gzip_encoder& operator=(const gzip_encoder&) = delete;
  ~gzip_encoder() override { deflateEnd(&z_); }

  step encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool finish) override {
    in = clamp(in);
    out = clamp(out);
    z_.next_in = const_cast<Bytef*>(in.data());
    z_.avail_in = static_cast<uInt>(in.size());
    z_.next_out = out.data();
    z_.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z_, finish ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) throw error(errc::io_failure, "zlib: deflate failed");
    return {in.size() - z_.avail_in, out.size() - z_.avail_out, rc == Z_STREAM_END};
  }

 private:
  z_stream z_{};
};

class gzip_part_encoder final : public part_encoder {
 public:
  explicit gzip_part_encoder(int level) : c_(libdeflate_alloc_compressor(level)) {
    if (!c_) throw error(errc::invalid_argument, "libdeflate: no compressor for gzip level " + std::to_string(level));
  }
  [[nodiscard]] std::size_t bound(std::size_t text) const override {
    return header_size + libdeflate_deflate_compress_bound(c_.get(), text) + trailer_size;
  }
  std::size_t encode(std::span<const std::uint8_t> text, std::span<std::uint8_t> out) override {
    const std::size_t size = bound(text.size());
    if (size > 0xFFFFFFFFu) throw error(errc::invalid_argument, "a gzip part must compress to less than 4 GiB");
    if (out.size() < size) throw error(errc::output_too_small, "gzip part: output below bound()");
    const std::size_t deflated = libdeflate_deflate_compress(
        c_.get(), text.data(), text.size(), out.data() + header_size, out.size() - header_size - trailer_size);
    if (deflated == 0) throw error(errc::io_failure, "libdeflate: deflate failed");
    const std::size_t member = header_size + deflated + trailer_size;
    write_header(out.data(), member, text.size());
    std::uint8_t* trailer = out.data() + header_size + deflated;
    put_le32(trailer, libdeflate_crc32(0, text.data(), text.size()));
    put_le32(trailer + 4, text.size());
    return member;
  }

 private:
  static void write_header(std::uint8_t* p, std::size_t member, std::size_t text) noexcept {
    const std::array<std::uint8_t, 16> fixed{magic::gzip[0],
                                             magic::gzip[1],
                                             magic::gzip_deflate,
                                             flag_extra | flag_header_crc,
                                             0,
                                             0,
                                             0,
                                             0,
                                             0,
                                             os_unix,
                                             4 + g8_length,
                                             0,
                                             g8_id[0],
                                             g8_id[1],
                                             g8_length,
                                             0};
    std::memcpy(p, fixed.data(), fixed.size());  // MTIME 0 (as gzip -n), XFL 0, XLEN, subfield head
    put_le32(p + 16, member);
    put_le32(p + 20, text);
    const std::uint32_t crc = header_crc({p, header_size - 2});
    p[header_size - 2] = static_cast<std::uint8_t>(crc);
    p[header_size - 1] = static_cast<std::uint8_t>(crc >> 8);
  }
  struct free_compressor {
    void operator()(libdeflate_compressor* c) const noexcept { libdeflate_free_compressor(c); }
  };
  std::unique_ptr<libdeflate_compressor, free_compressor> c_;
};

// The 'G8' or 'BC' subfield in a member's extra field: the member's size and, for G8, its text's.
std::optional<member_extent> sized_subfield(std::span<const std::uint8_t> extra) {
  while (extra.size() >= 4) {
    const std::size_t length = le16(extra.data() + 2);
    if (length > extra.size() - 4) return std::nullopt;
    const auto data = extra.subspan(4, length);
    if (extra[0] == g8_id[0] && extra[1] == g8_id[1] && length == g8_length)
      return member_extent{magic::le32(data.data()), magic::le32(data.data() + 4)};
    if (extra[0] == bgzf_id[0] && extra[1] == bgzf_id[1] && length == 2)
      return member_extent{le16(data.data()) + 1u, std::nullopt};
    extra = extra.subspan(4 + length);
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<frame_decoder> make_gzip_decoder() { return std::make_unique<gzip_decoder>(); }

std::optional<member_extent> gzip_member_extent(const random_reader& read, std::uint64_t at, std::uint64_t file_size) {
  std::array<std::uint8_t, 12> fixed{};
  if (file_size < at + fixed.size() + trailer_size) return std::nullopt;
  read(fixed, at);
  const std::uint8_t flags = fixed[3];
  if (magic::gzip_member(fixed) != magic::verdict::yes || fixed[2] != magic::gzip_deflate || !(flags & flag_extra))
    return std::nullopt;
  // The fixed part, the extra field and (with FHCRC, where no name or comment comes between) the CRC.
  const bool crc = flags & flag_header_crc;
  if (crc && (flags & flag_name_comment)) return std::nullopt;
  std::vector<std::uint8_t> header(fixed.size() + le16(fixed.data() + 10) + (crc ? 2 : 0));
  if (file_size < at + header.size() + trailer_size) return std::nullopt;
  read(header, at);
  const std::span<const std::uint8_t> extra =
      std::span(header).subspan(fixed.size(), header.size() - fixed.size() - (crc ? 2 : 0));
  if (crc && header_crc(std::span(header).first(header.size() - 2)) != le16(header.data() + header.size() - 2))
    return std::nullopt;  // a damaged header: decompressing says so
  std::optional<member_extent> e = sized_subfield(extra);
  if (!e || e->size < header.size() + trailer_size || e->size > file_size - at) return std::nullopt;
  if (!e->text_size) {  // BGZF: the trailer's ISIZE (a BGZF member holds at most 64 KiB of text)
    std::array<std::uint8_t, 4> isize{};
    read(isize, at + e->size - isize.size());
    e->text_size = magic::le32(isize.data());
  }
  return e;
}

std::unique_ptr<frame_encoder> make_gzip_encoder(int level) { return std::make_unique<gzip_encoder>(level); }
std::unique_ptr<part_encoder> make_gzip_part_encoder(int level) { return std::make_unique<gzip_part_encoder>(level); }

}  // namespace gutf8::internal::compress
