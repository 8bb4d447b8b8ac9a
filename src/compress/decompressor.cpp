#include "compress/decompressor.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "compress/magic.hpp"

namespace gutf8::internal::compress {

namespace {

// What the bytes after a member are.
enum class next_is { member, skippable, garbage, cut_short };

next_is classify(format f, std::span<const std::uint8_t> head) {
  using magic::verdict;
  const auto by = [](verdict v) {
    return v == verdict::yes ? next_is::member : v == verdict::partial ? next_is::cut_short : next_is::garbage;
  };
  if (f == format::zstd || f == format::lz4) {
    const verdict skip = magic::skippable_frame(head);
    if (skip == verdict::yes) return head.size() >= magic::skippable_header ? next_is::skippable : next_is::cut_short;
    if (skip == verdict::partial) return next_is::cut_short;
    return by(f == format::zstd ? magic::zstd_frame(head) : magic::lz4_frame(head));
  }
  if (f == format::gzip && head.size() == 1 && head[0] != 0) return next_is::cut_short;  // gzip wants 2 magic bytes
  if (f == format::gzip) return by(magic::gzip_member(head));
  if (f == format::bzip2) return by(magic::bzip2_stream(head));
  return next_is::garbage;  // xz: liblzma takes every stream and padding as one member
}

}  // namespace

struct decompressor::state {
  format f = format::none;
  layout holds = layout::members;
  std::unique_ptr<frame_decoder> dec;
  byte_source src;                       // empty when the input is in memory
  std::vector<std::uint8_t> buf;         // the input buffer (byte_source only)
  std::span<const std::uint8_t> window;  // input not consumed yet
  bool eof = false;                      // no input after window
  bool last = true;
  std::uint64_t pos = 0;  // the file offset of window[0]
  std::uint64_t text = 0;
  std::optional<std::uint64_t> expect_text;
  std::optional<std::uint64_t> ignored;
  std::uint64_t members = 0;  // members (and skippable frames) passed so far
  std::uint64_t decoded = 0;  // members decoded (not skippable)
  bool in_member = false;
  bool done = false;
  bool fresh = true;  // nothing decoded since open()

  void start(format fmt, const part& p) {
    const bool same = dec && f == fmt && holds == layout::members && p.holds == layout::members;
    f = fmt;
    holds = p.holds;
    if (same)
      dec->restart();
    else
      dec = holds == layout::xz_block ? make_xz_block_decoder(p.xz_check, p.text_size) : make_decoder(f);
    last = p.last;
    pos = p.offset;
    text = 0;
    expect_text = p.text_size;
    ignored.reset();
    members = decoded = p.first || holds == layout::xz_block ? 0 : 1;
    in_member = done = false;
    fresh = true;
  }

  void refill() {
    if (!src || eof) {
      eof = true;
      return;
    }
    const std::size_t kept = window.size();
    std::memmove(buf.data(), window.data(), kept);
    const std::size_t n = src(std::span(buf).subspan(kept));
    eof = n == 0;
    window = std::span<const std::uint8_t>(buf).first(kept + n);
  }
  std::span<const std::uint8_t> peek(std::size_t n) {
    while (window.size() < n && !eof) refill();
    return window.first(std::min(n, window.size()));
  }
  // Input from src, after head (bytes already read from it).
  void attach(byte_source source, std::span<const std::uint8_t> head = {}) {
    buf.resize(std::max(decompressor::input_buffer, head.size()));
    std::copy(head.begin(), head.end(), buf.begin());
    window = std::span<const std::uint8_t>(buf).first(head.size());
    src = std::move(source);
    eof = false;
  }
  void advance(std::size_t n) {
    window = window.subspan(n);
    pos += n;
  }

  [[nodiscard]] std::optional<std::uint64_t> whole_text() const;
  bool read_whole(std::span<std::uint8_t> out);
  void next_member();
  void skip_frame(std::uint64_t size);
  void trailing_garbage();
  void count_text(std::size_t n);
  void check_end() const;
};

std::optional<std::uint64_t> decompressor::state::whole_text() const {
  if (!fresh || src || holds != layout::members) return std::nullopt;
  return expect_text ? expect_text : dec->whole_bound(window);
}

// A part in memory whose text (or its bound) fits out: whole members at once, where the decoder can
// (gzip, zstd); else, or on any failure, the streaming path goes over the same bytes.
bool decompressor::state::read_whole(std::span<std::uint8_t> out) {
  const std::optional<std::uint64_t> room = whole_text();
  fresh = false;
  if (!room || out.size() < *room) return false;
  const std::optional<std::size_t> n = dec->decode_whole(window, out.first(static_cast<std::size_t>(*room)));
  if (!n || (expect_text && n != expect_text)) return false;
  advance(window.size());
  text = *n;
  done = true;
  return true;
}

void decompressor::state::next_member() {
  const auto head = peek(magic::skippable_header);
  if (head.empty()) {
    if (members == 0) throw_truncated(f, pos);
    done = true;
    return;
  }
  if (holds == layout::xz_block && decoded > 0) throw_corrupt(f, pos, "the block ends before the index says");
  const next_is what =
      holds == layout::xz_block || (f == format::xz && members == 0) ? next_is::member : classify(f, head);
  if (what == next_is::member) {
    in_member = true;
    return;
  }
  if (what == next_is::skippable) return skip_frame(magic::skippable_header + magic::le32(head.data() + 4));
  if (what == next_is::cut_short) {
    if (last) throw_truncated(f, pos + head.size());
    throw_corrupt(f, pos, "a part ends inside a header");
  }
  const format other = f == format::zstd ? format::lz4 : format::zstd;
  if ((f == format::zstd || f == format::lz4) && members > 0 && decoded == 0 &&
      classify(other, head) == next_is::member) {
    f = other;  // the skippable frames before it were the other format's
    dec = make_decoder(f);
    in_member = true;
    return;
  }
  trailing_garbage();
}

void decompressor::state::skip_frame(std::uint64_t size) {
  while (size > 0) {
    if (window.empty()) refill();
    if (window.empty()) last ? throw_truncated(f, pos) : throw_corrupt(f, pos, "a frame runs past the end of its part");
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(size, window.size()));
    advance(take);
    size -= take;
  }
  ++members;
}

// Bytes after the last member: gzip and bzip2 ignore them (gzip silently when they are zeros), the
// other tools fail; inside a file (a part that is not its last) they are corrupt data.
void decompressor::state::trailing_garbage() {
  if (members == 0) throw_corrupt(f, pos, "not a " + std::string(name(f)) + " stream");
  if (!last) throw_corrupt(f, pos, "bytes after the last member of a part");
  if (f != format::gzip && f != format::bzip2) throw_corrupt(f, pos, "trailing bytes after the last frame");
  const std::uint64_t from = pos;
  bool zeros = true;
  for (;;) {
    zeros = zeros && std::all_of(window.begin(), window.end(), [](std::uint8_t b) { return b == 0; });
    advance(window.size());
    if (eof) break;
    refill();
  }
  if (f == format::bzip2 || !zeros) ignored = from;
  done = true;
}

void decompressor::state::count_text(std::size_t n) {
  text += n;
  if (expect_text && text > *expect_text) throw_corrupt(f, pos, "more text than the header records");
}

void decompressor::state::check_end() const {
  if (expect_text && text != *expect_text) throw_corrupt(f, pos, "less text than the header records");
}

decompressor::decompressor() : s_(std::make_unique<state>()) {}
decompressor::decompressor(decompressor&&) noexcept = default;
decompressor& decompressor::operator=(decompressor&&) noexcept = default;
decompressor::~decompressor() = default;

void decompressor::open(format f, byte_source src, std::span<const std::uint8_t> head) {
  s_->start(f, part{});
  s_->attach(std::move(src), head);
}

void decompressor::open(format f, const part& p, std::span<const std::uint8_t> bytes) {
  s_->start(f, p);
  s_->src = nullptr;
  s_->window = bytes.first(std::min<std::uint64_t>(bytes.size(), p.size));
  s_->eof = true;
}

void decompressor::open(format f, const part& p, random_reader read) {
  s_->start(f, p);
  s_->attach([read = std::move(read), at = p.offset, end = p.offset + p.size](std::span<std::uint8_t> b) mutable {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(b.size(), end - at));
    if (n > 0) read(b.first(n), at);
    at += n;
    return n;
  });
}

std::size_t decompressor::read(std::span<std::uint8_t> out) {
  state& s = *s_;
  if (s.read_whole(out)) return s.text;
  while (!out.empty() && !s.done) {
    if (!s.in_member) {
      s.next_member();
      continue;
    }
    const step r = s.dec->decode(s.window, out, s.eof, s.pos);
    s.advance(r.consumed);
    if (r.end) {
      s.in_member = false;
      ++s.members;
      ++s.decoded;
      s.dec->restart();
    }
    if (r.produced > 0) {
      s.count_text(r.produced);
      return r.produced;
    }
    if (r.consumed > 0 || r.end) continue;
    if (s.eof)
      s.last ? throw_truncated(s.f, s.pos) : throw_corrupt(s.f, s.pos, "a member runs past the end of its part");
    s.refill();
  }
  if (s.done) s.check_end();
  return 0;
}

std::optional<std::uint64_t> decompressor::whole_text() const { return s_->whole_text(); }

std::uint64_t decompressor::compressed_position() const noexcept { return s_->pos; }
std::uint64_t decompressor::text_position() const noexcept { return s_->text; }
std::optional<std::uint64_t> decompressor::ignored_from() const noexcept { return s_->ignored; }

}  // namespace gutf8::internal::compress
