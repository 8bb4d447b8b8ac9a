#include "compress/codecs.hpp"

#include <string>

#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

namespace {

[[noreturn]] void no_codec(format f) {
  throw error(errc::invalid_argument, "no codec for format " + std::string(name(f)));
}

}  // namespace

std::unique_ptr<frame_decoder> make_decoder(format f) {
  switch (f) {
    case format::gzip:
      return make_gzip_decoder();
    case format::zstd:
      return make_zstd_decoder();
    case format::xz:
      return make_xz_decoder();
    case format::bzip2:
      return make_bzip2_decoder();
    case format::lz4:
      return make_lz4_decoder();
    case format::none:
      break;
  }
  no_codec(f);
}

std::unique_ptr<frame_encoder> make_encoder(format f, int level) {
  switch (f) {
    case format::gzip:
      return make_gzip_encoder(level);
    case format::zstd:
      return make_zstd_encoder(level);
    case format::xz:
      return make_xz_encoder(level);
    case format::bzip2:
      return make_bzip2_encoder(level);
    case format::lz4:
      return make_lz4_encoder(level);
    case format::none:
      break;
  }
  no_codec(f);
}

std::unique_ptr<part_encoder> make_part_encoder(format f, int level) {
  switch (f) {
    case format::gzip:
      return make_gzip_part_encoder(level);
    case format::zstd:
      return make_zstd_part_encoder(level);
    case format::xz:
      return make_xz_part_encoder(level);
    case format::bzip2:
      return make_bzip2_part_encoder(level);
    case format::lz4:
      return make_lz4_part_encoder(level);
    case format::none:
      break;
  }
  no_codec(f);
}

}  // namespace gutf8::internal::compress
