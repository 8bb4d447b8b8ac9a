#include "compress/compressor.hpp"

#include <utility>

#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

compressor::compressor(format f, byte_sink sink, int level)
    : enc_(make_encoder(f, level)), sink_(std::move(sink)), buf_(output_buffer) {}

void compressor::flush() {
  if (used_ > 0) sink_(std::span<const std::uint8_t>(buf_).first(used_));
  used_ = 0;
}

void compressor::write(std::span<const std::uint8_t> text) {
  if (finished_) throw error(errc::invalid_argument, "compressor: write after finish");
  while (!text.empty()) {
    if (used_ == buf_.size()) flush();
    const step s = enc_->encode(text, std::span(buf_).subspan(used_), false);
    text = text.subspan(s.consumed);
    used_ += s.produced;
    if (s.consumed == 0 && s.produced == 0) stalled();
  }
}

void compressor::finish() {
  for (bool end = finished_; !end;) {
    if (used_ == buf_.size()) flush();
    const step s = enc_->encode({}, std::span(buf_).subspan(used_), true);
    used_ += s.produced;
    end = s.end;
    if (!end && s.produced == 0) stalled();
  }
  flush();
  finished_ = true;
}

// An encoder that takes nothing and gives nothing wants room: flush, or fail where there is room.
void compressor::stalled() {
  if (used_ == 0) throw error(errc::io_failure, "compressor: the encoder made no progress");
  flush();
}

part_compressor::part_compressor(format f, int level) : enc_(make_part_encoder(f, level)) {}

void part_compressor::append(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& out) {
  const std::size_t at = out.size();
  out.resize(at + bound(text.size()));
  out.resize(at + compress(text, std::span(out).subspan(at)));
}

}  // namespace gutf8::internal::compress
