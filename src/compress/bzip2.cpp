// bzip2: libbz2 decodes one stream at a time (bzip2 -d takes concatenated streams, so does the
// decompressor), encodes a stream, and a part as a whole stream of its own.
#include <bzlib.h>

#include <string>

#include "compress/codecs.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

namespace {

// libbz2 counts in unsigned int and takes char*.
void bind(bz_stream& s, std::span<const std::uint8_t> in, std::span<std::uint8_t> out) noexcept {
  in = clamp(in);
  out = clamp(out);
  s.next_in = reinterpret_cast<char*>(const_cast<std::uint8_t*>(in.data()));  // libbz2 only reads it
  s.avail_in = static_cast<unsigned>(in.size());
  s.next_out = reinterpret_cast<char*>(out.data());
  s.avail_out = static_cast<unsigned>(out.size());
}

class bzip2_decoder final : public frame_decoder {
 public:
  bzip2_decoder() { init(); }
  bzip2_decoder(const bzip2_decoder&) = delete;
  bzip2_decoder& operator=(const bzip2_decoder&) = delete;
  ~bzip2_decoder() override { BZ2_bzDecompressEnd(&s_); }

  step decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool, std::uint64_t at) override {
    bind(s_, in, out);
    const unsigned in_before = s_.avail_in, out_before = s_.avail_out;
    const int rc = BZ2_bzDecompress(&s_);
    const step s{in_before - s_.avail_in, out_before - s_.avail_out, rc == BZ_STREAM_END};
    if (rc == BZ_MEM_ERROR) throw error(errc::out_of_memory, "libbz2: out of memory");
    if (rc == BZ_DATA_ERROR_MAGIC) throw_corrupt(format::bzip2, at + s.consumed, "not a bzip2 stream");
    if (rc != BZ_OK && rc != BZ_STREAM_END) throw_corrupt(format::bzip2, at + s.consumed, "data integrity error");
    return s;
  }
  void restart() override {
    BZ2_bzDecompressEnd(&s_);
    init();
  }

 private:
  void init() {
    s_ = bz_stream{};
    if (BZ2_bzDecompressInit(&s_, 0, 0) != BZ_OK)
      throw error(errc::out_of_memory, "libbz2: BZ2_bzDecompressInit failed");
  }
  bz_stream s_{};
};

class bzip2_encoder final : public frame_encoder {
 public:
  explicit bzip2_encoder(int level) {
    if (BZ2_bzCompressInit(&s_, level, 0, 0) != BZ_OK)
      throw error(errc::invalid_argument, "libbz2: no encoder for bzip2 level " + std::to_string(level));
  }
  bzip2_encoder(const bzip2_encoder&) = delete;
  bzip2_encoder& operator=(const bzip2_encoder&) = delete;
  ~bzip2_encoder() override { BZ2_bzCompressEnd(&s_); }

  step encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool finish) override {
    bind(s_, in, out);
    const unsigned in_before = s_.avail_in, out_before = s_.avail_out;
    const int rc = BZ2_bzCompress(&s_, finish ? BZ_FINISH : BZ_RUN);
    if (rc != BZ_RUN_OK && rc != BZ_FINISH_OK && rc != BZ_STREAM_END)
      throw error(errc::io_failure, "libbz2: BZ2_bzCompress failed (" + std::to_string(rc) + ")");
    return {in_before - s_.avail_in, out_before - s_.avail_out, rc == BZ_STREAM_END};
  }

 private:
  bz_stream s_{};
};

class bzip2_part_encoder final : public part_encoder {
 public:
  explicit bzip2_part_encoder(int level) : level_(level) {
    if (level < 1 || level > 9) throw error(errc::invalid_argument, "bzip2 levels are 1 to 9");
  }
  // libbz2's documented bound: 1 % more than the text and 600 bytes.
  [[nodiscard]] std::size_t bound(std::size_t text) const override { return text + text / 100 + 600; }
  std::size_t encode(std::span<const std::uint8_t> text, std::span<std::uint8_t> out) override {
    if (text.size() > max_step_bytes || out.size() < bound(text.size()))
      throw error(errc::invalid_argument, "bzip2 part: text above 1 GiB or output below bound()");
    auto size = static_cast<unsigned>(std::min(out.size(), max_step_bytes));
    char none = 0;  // libbz2 refuses a null source, which an empty span may hold
    char* source = text.empty() ? &none : reinterpret_cast<char*>(const_cast<std::uint8_t*>(text.data()));
    const int rc = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out.data()), &size, source,
                                            static_cast<unsigned>(text.size()), level_, 0, 0);
    if (rc != BZ_OK)
      throw error(errc::io_failure, "libbz2: BZ2_bzBuffToBuffCompress failed (" + std::to_string(rc) + ")");
    return size;
  }

 private:
  int level_;
};

}  // namespace

std::unique_ptr<frame_decoder> make_bzip2_decoder() { return std::make_unique<bzip2_decoder>(); }
std::unique_ptr<frame_encoder> make_bzip2_encoder(int level) { return std::make_unique<bzip2_encoder>(level); }
std::unique_ptr<part_encoder> make_bzip2_part_encoder(int level) { return std::make_unique<bzip2_part_encoder>(level); }

}  // namespace gutf8::internal::compress
