// zstd: libzstd's streaming API in and out, ZSTD_decompressDCtx for a part's frames decoded at once,
// ZSTD_compress2 for a part's frames (each with its proof); a frame's extent is walked through its
// block headers (RFC 8878: a frame records no compressed size of its own).
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader (exported by Debian's libzstd)
#include <zstd.h>

#include <algorithm>
#include <array>
#include <string>

#include "compress/codecs.hpp"
#include "compress/magic.hpp"
#include "compress/proof.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

namespace {

struct free_dctx {
  void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
};
struct free_cctx {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
using dctx_ptr = std::unique_ptr<ZSTD_DCtx, free_dctx>;
using cctx_ptr = std::unique_ptr<ZSTD_CCtx, free_cctx>;

void check_setting(std::size_t rc, const char* what) {
  if (ZSTD_isError(rc))
    throw error(errc::invalid_argument, std::string("zstd: ") + what + ": " + ZSTD_getErrorName(rc));
}

// A compression context with the zstd tool's settings: the level and a content checksum.
cctx_ptr make_cctx(int level) {
  cctx_ptr c(ZSTD_createCCtx());
  if (!c) throw error(errc::out_of_memory, "zstd: ZSTD_createCCtx failed");
  check_setting(ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, level), "level");
  check_setting(ZSTD_CCtx_setParameter(c.get(), ZSTD_c_checksumFlag, 1), "checksum");
  return c;
}

class zstd_decoder final : public frame_decoder {
 public:
  zstd_decoder() : d_(ZSTD_createDCtx()) {
    if (!d_) throw error(errc::out_of_memory, "zstd: ZSTD_createDCtx failed");
  }
  step decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool, std::uint64_t at) override {
    ZSTD_inBuffer i{in.data(), in.size(), 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    const std::size_t rc = ZSTD_decompressStream(d_.get(), &o, &i);
    if (ZSTD_isError(rc)) throw_corrupt(format::zstd, at + i.pos, ZSTD_getErrorName(rc));
    return {i.pos, o.pos, rc == 0};  // 0: the frame is decoded and flushed
  }
  void restart() override { ZSTD_DCtx_reset(d_.get(), ZSTD_reset_session_only); }

  // Every frame (and skippable frame) straight into out: the streaming decoder would decode into
  // its window and copy out of it.
  std::optional<std::size_t> decode_whole(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) override {
    if (in.empty()) return std::nullopt;  // no frame at all: the streaming path says so
    const std::size_t rc = ZSTD_decompressDCtx(d_.get(), out.data(), out.size(), in.data(), in.size());
    restart();
    if (ZSTD_isError(rc)) return std::nullopt;
    return rc;
  }
  std::optional<std::uint64_t> whole_bound(std::span<const std::uint8_t> in) override {
    const unsigned long long bound = ZSTD_decompressBound(in.data(), in.size());
    if (in.empty() || bound == ZSTD_CONTENTSIZE_ERROR) return std::nullopt;
    return bound;
  }

 private:
  dctx_ptr d_;
};

class zstd_encoder final : public frame_encoder {
 public:
  explicit zstd_encoder(int level) : c_(make_cctx(level)) {}
  step encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool finish) override {
    ZSTD_inBuffer i{in.data(), in.size(), 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    const std::size_t rc = ZSTD_compressStream2(c_.get(), &o, &i, finish ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(rc)) throw error(errc::io_failure, std::string("zstd: ") + ZSTD_getErrorName(rc));
    return {i.pos, o.pos, finish && rc == 0};
  }

 private:
  cctx_ptr c_;
};

// A part's text as frames of at most frame_text bytes, each followed by its proof (proof.hpp): the
// frames a GPU lane takes. zstd -3's window is 1 MiB, so the cut costs little ratio.
class zstd_part_encoder final : public part_encoder {
 public:
  static constexpr std::size_t frame_text = std::size_t{1} << 20;

  explicit zstd_part_encoder(int level) : c_(make_cctx(level)) {}
  [[nodiscard]] std::size_t bound(std::size_t text) const override {
    const std::size_t full = text / frame_text, rest = text % frame_text;
    const bool partial = rest != 0 || full == 0;  // the empty text is one frame too
    return full * ZSTD_compressBound(frame_text) + (partial ? ZSTD_compressBound(rest) : 0) +
           (full + (partial ? 1 : 0)) * proof_size;
  }
  std::size_t encode(std::span<const std::uint8_t> text, std::span<std::uint8_t> out) override {
    std::size_t written = 0, at = 0;
    do {  // once for the empty text
      const std::size_t n = std::min(frame_text, text.size() - at);
      const std::span<std::uint8_t> to = out.subspan(written);
      const std::size_t rc = ZSTD_compress2(c_.get(), to.data(), to.size(), text.data() + at, n);
      if (ZSTD_isError(rc)) throw error(errc::io_failure, std::string("zstd: ") + ZSTD_getErrorName(rc));
      const proof p = proof_of(to.first(rc));
      std::copy(p.begin(), p.end(), to.begin() + static_cast<std::ptrdiff_t>(rc));
      written += rc + proof_size;
      at += n;
    } while (at < text.size());
    return written;
  }

 private:
  cctx_ptr c_;
};

constexpr std::size_t block_header = 3;
constexpr std::size_t checksum_size = 4;

// The end of the blocks from `at` (the first block header), counted in `blocks`, or none where they
// run past the file, use the reserved block type or exceed the frame's block size (its window, at
// most 128 KiB: RFC 8878 holds every block to it). `room`: the most text the blocks make whatever
// the header says (a raw or RLE block its size, a compressed one the largest block).
std::optional<std::uint64_t> blocks_end(const random_reader& read, std::uint64_t at, std::uint64_t file_size,
                                        std::uint64_t block_max, std::uint64_t& blocks, std::uint64_t& room) {
  for (;; ++blocks) {
    std::array<std::uint8_t, block_header> h{};
    if (file_size - at < h.size()) return std::nullopt;
    read(h, at);
    const std::uint32_t v = std::uint32_t(h[0]) | std::uint32_t(h[1]) << 8 | std::uint32_t(h[2]) << 16;
    const std::uint32_t type = (v >> 1) & 3;
    if (type == 3 || (v >> 3) > block_max) return std::nullopt;
    const std::uint64_t content = type == 1 ? 1 : v >> 3;  // an RLE block stores its byte once
    room += type == 2 ? ZSTD_BLOCKSIZE_MAX : v >> 3;
    at += h.size() + content;
    if (at > file_size) return std::nullopt;
    if (v & 1) return at;  // Last_Block
  }
}

}  // namespace

std::unique_ptr<frame_decoder> make_zstd_decoder() { return std::make_unique<zstd_decoder>(); }
std::unique_ptr<frame_encoder> make_zstd_encoder(int level) { return std::make_unique<zstd_encoder>(level); }
std::unique_ptr<part_encoder> make_zstd_part_encoder(int level) { return std::make_unique<zstd_part_encoder>(level); }

std::optional<member_extent> zstd_frame_extent(const random_reader& read, std::uint64_t at, std::uint64_t file_size) {
  std::array<std::uint8_t, ZSTD_FRAMEHEADERSIZE_MAX> head{};
  const auto got = std::span(head).first(std::min<std::uint64_t>(head.size(), file_size - at));
  read(got, at);
  if (magic::skippable_frame(got) == magic::verdict::yes && got.size() >= magic::skippable_header) {
    const std::uint64_t size = magic::skippable_header + magic::le32(got.data() + 4);
    if (size > file_size - at) return std::nullopt;
    return member_extent{size, 0, true};
  }
  ZSTD_frameHeader h{};
  if (ZSTD_getFrameHeader(&h, got.data(), got.size()) != 0 || h.frameType != ZSTD_frame) return std::nullopt;
  std::uint64_t blocks = 1, room = 0;
  const std::optional<std::uint64_t> end = blocks_end(read, at + h.headerSize, file_size, h.blockSizeMax, blocks, room);
  if (!end || (h.checksumFlag && file_size - *end < checksum_size)) return std::nullopt;
  // A content size its blocks cannot make: bytes inside the frame were read as its last block header.
  if (h.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN && h.frameContentSize > room) return std::nullopt;
  member_extent e{*end + (h.checksumFlag ? checksum_size : 0) - at, std::nullopt};
  e.checksum = h.checksumFlag != 0;
  e.room = room;
  if (h.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN) e.text_size = h.frameContentSize;
  else e.text_bound = blocks * std::min<std::uint64_t>(ZSTD_BLOCKSIZE_MAX, h.windowSize);
  return e;
}

}  // namespace gutf8::internal::compress
