// lz4 (frame format): liblz4's frame API in and out, with the lz4 tool's settings (independent
// 4 MiB blocks, a content checksum); a frame's extent is walked through its block headers.
#define LZ4F_STATIC_LINKING_ONLY  // LZ4F_compressFrame_usingCDict (exported by Debian's liblz4)
#include <lz4frame.h>

#include <array>
#include <cstring>
#include <string>

#include "compress/codecs.hpp"
#include "compress/magic.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

namespace {

struct free_dctx {
  void operator()(LZ4F_dctx* c) const noexcept { LZ4F_freeDecompressionContext(c); }
};
struct free_cctx {
  void operator()(LZ4F_cctx* c) const noexcept { LZ4F_freeCompressionContext(c); }
};
using dctx_ptr = std::unique_ptr<LZ4F_dctx, free_dctx>;
using cctx_ptr = std::unique_ptr<LZ4F_cctx, free_cctx>;

dctx_ptr make_dctx() {
  LZ4F_dctx* d = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
    throw error(errc::out_of_memory, "liblz4: LZ4F_createDecompressionContext failed");
  return dctx_ptr(d);
}
cctx_ptr make_cctx() {
  LZ4F_cctx* c = nullptr;
  if (LZ4F_isError(LZ4F_createCompressionContext(&c, LZ4F_VERSION)))
    throw error(errc::out_of_memory, "liblz4: LZ4F_createCompressionContext failed");
  return cctx_ptr(c);
}

// The lz4 tool's frame settings; a part's frame also records its content size.
LZ4F_preferences_t preferences(int level, std::uint64_t content_size = 0) noexcept {
  LZ4F_preferences_t p{};
  p.frameInfo.blockSizeID = LZ4F_max4MB;
  p.frameInfo.blockMode = LZ4F_blockIndependent;
  p.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  p.frameInfo.contentSize = content_size;
  p.compressionLevel = level;
  return p;
}

void check_lz4(std::size_t rc, const char* what) {
  if (LZ4F_isError(rc)) throw error(errc::io_failure, std::string("liblz4: ") + what + ": " + LZ4F_getErrorName(rc));
}

class lz4_decoder final : public frame_decoder {
 public:
  lz4_decoder() : d_(make_dctx()) {}
  step decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool, std::uint64_t at) override {
    std::size_t in_size = in.size(), out_size = out.size();
    const std::size_t rc = LZ4F_decompress(d_.get(), out.data(), &out_size, in.data(), &in_size, nullptr);
    if (LZ4F_isError(rc)) throw_corrupt(format::lz4, at + in_size, LZ4F_getErrorName(rc));
    return {in_size, out_size, rc == 0};  // 0: the frame is decoded, its checksum checked
  }
  void restart() override { LZ4F_resetDecompressionContext(d_.get()); }

 private:
  dctx_ptr d_;
};

// liblz4 writes a step's output only into room for its worst case (a whole 4 MiB block and more);
// the encoder stages it and hands it out in the caller's pieces.
class lz4_encoder final : public frame_encoder {
 public:
  explicit lz4_encoder(int level) : c_(make_cctx()), prefs_(preferences(level)) {
    stage_.resize(LZ4F_compressBound(chunk, &prefs_) + LZ4F_HEADER_SIZE_MAX);
  }
  step encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool finish) override {
    step s;
    if (staged_ == drained_) {
      staged_ = drained_ = 0;
      if (!began_) {
        staged_ = LZ4F_compressBegin(c_.get(), stage_.data(), stage_.size(), &prefs_);
        check_lz4(staged_, "LZ4F_compressBegin");
        began_ = true;
      } else if (!in.empty()) {
        s.consumed = std::min(in.size(), chunk);
        staged_ = LZ4F_compressUpdate(c_.get(), stage_.data(), stage_.size(), in.data(), s.consumed, nullptr);
        check_lz4(staged_, "LZ4F_compressUpdate");
      } else if (finish && !ended_) {
        staged_ = LZ4F_compressEnd(c_.get(), stage_.data(), stage_.size(), nullptr);
        check_lz4(staged_, "LZ4F_compressEnd");
        ended_ = true;
      }
    }
    s.produced = std::min(out.size(), staged_ - drained_);
    std::memcpy(out.data(), stage_.data() + drained_, s.produced);
    drained_ += s.produced;
    s.end = ended_ && drained_ == staged_;
    return s;
  }

 private:
  static constexpr std::size_t chunk = 256 * 1024;  // text taken per step
  cctx_ptr c_;
  LZ4F_preferences_t prefs_;
  std::vector<std::uint8_t> stage_;
  std::size_t staged_ = 0, drained_ = 0;
  bool began_ = false, ended_ = false;
};

class lz4_part_encoder final : public part_encoder {
 public:
  explicit lz4_part_encoder(int level) : c_(make_cctx()), level_(level) {}
  [[nodiscard]] std::size_t bound(std::size_t text) const override {
    const LZ4F_preferences_t p = preferences(level_, text);
    return LZ4F_compressFrameBound(text, &p);
  }
  std::size_t encode(std::span<const std::uint8_t> text, std::span<std::uint8_t> out) override {
    const LZ4F_preferences_t p = preferences(level_, text.size());
    const std::size_t rc =
        LZ4F_compressFrame_usingCDict(c_.get(), out.data(), out.size(), text.data(), text.size(), nullptr, &p);
    check_lz4(rc, "LZ4F_compressFrame");
    return rc;
  }

 private:
  cctx_ptr c_;
  int level_;
};

constexpr std::size_t block_header = 4;
constexpr std::size_t checksum_size = 4;
constexpr std::uint32_t uncompressed_bit = 0x80000000u;

// The end of a frame's blocks from `at` (the first block header) through its end mark and content
// checksum, or none where they run past the file.
std::optional<std::uint64_t> blocks_end(const random_reader& read, std::uint64_t at, std::uint64_t file_size,
                                        const LZ4F_frameInfo_t& info) {
  const std::uint64_t block_check = info.blockChecksumFlag ? checksum_size : 0;
  for (;;) {
    std::array<std::uint8_t, block_header> h{};
    if (file_size - at < h.size()) return std::nullopt;
    read(h, at);
    at += h.size();
    const std::uint32_t size = magic::le32(h.data()) & ~uncompressed_bit;
    if (magic::le32(h.data()) == 0) break;  // the end mark
    if (file_size - at < size + block_check) return std::nullopt;
    at += size + block_check;
  }
  const std::uint64_t end = at + (info.contentChecksumFlag ? checksum_size : 0);
  return end <= file_size ? std::optional(end) : std::nullopt;
}

}  // namespace

std::unique_ptr<frame_decoder> make_lz4_decoder() { return std::make_unique<lz4_decoder>(); }
std::unique_ptr<frame_encoder> make_lz4_encoder(int level) { return std::make_unique<lz4_encoder>(level); }
std::unique_ptr<part_encoder> make_lz4_part_encoder(int level) { return std::make_unique<lz4_part_encoder>(level); }

std::optional<member_extent> lz4_frame_extent(const random_reader& read, std::uint64_t at, std::uint64_t file_size) {
  std::array<std::uint8_t, LZ4F_HEADER_SIZE_MAX> head{};
  const auto got = std::span(head).first(std::min<std::uint64_t>(head.size(), file_size - at));
  read(got, at);
  if (magic::skippable_frame(got) == magic::verdict::yes && got.size() >= magic::skippable_header) {
    const std::uint64_t size = magic::skippable_header + magic::le32(got.data() + 4);
    if (size > file_size - at) return std::nullopt;
    return member_extent{size, 0, true};
  }
  if (got.size() < LZ4F_MIN_SIZE_TO_KNOW_HEADER_LENGTH) return std::nullopt;
  std::size_t header = LZ4F_headerSize(got.data(), got.size());
  if (LZ4F_isError(header) || header > got.size()) return std::nullopt;
  LZ4F_frameInfo_t info{};
  const dctx_ptr d = make_dctx();
  if (LZ4F_isError(LZ4F_getFrameInfo(d.get(), &info, got.data(), &header))) return std::nullopt;
  const std::optional<std::uint64_t> end = blocks_end(read, at + header, file_size, info);
  if (!end) return std::nullopt;
  member_extent e{*end - at, std::nullopt};
  if (info.contentSize != 0) e.text_size = info.contentSize;
  return e;
}

}  // namespace gutf8::internal::compress
