#include "compress/parts.hpp"

#include <utility>

namespace gutf8::internal::compress {

struct splitter::state {
  state(format fmt, random_reader r, std::uint64_t size, std::uint64_t t)
      : f(fmt), read(std::move(r)), file_size(size), target(std::max<std::uint64_t>(t, 1)) {}

  format f;
  random_reader read;
  std::uint64_t file_size;
  std::uint64_t target;
  std::uint64_t at = 0;  // members: the next frame's offset
  bool started = false;
  std::optional<std::vector<xz_block>> xz;  // xz: the index's blocks (none: the index failed)
  std::size_t next_block = 0;
  // The extent a part looked at past its end (to keep a proof with its frame): the next part's first.
  std::uint64_t ahead_at = ~std::uint64_t{0};
  std::optional<member_extent> ahead;

  std::optional<member_extent> extent(std::uint64_t offset) {
    if (offset == ahead_at) {  // each frame's headers are walked once (a pread each on a file)
      ahead_at = ~std::uint64_t{0};
      return ahead;
    }
    switch (f) {
      case format::gzip:
        return gzip_member_extent(read, offset, file_size);
      case format::zstd:
        return zstd_frame_extent(read, offset, file_size);
      case format::lz4:
        return lz4_frame_extent(read, offset, file_size);
      default:
        return std::nullopt;  // bzip2 streams record no size; xz goes by its index
    }
  }

  // Whole frames from `at` up to about target bytes; where a frame's extent is unknown, the rest.
  std::optional<part> next_members() {
    if (at == file_size && started) return std::nullopt;
    started = true;
    part p{at, 0, 0, layout::members, 0, at == 0, false};
    bool text_known = true;
    std::optional<std::uint64_t> bound = 0;
    // Past the target, skippable frames still join the part: a frame's proof stays with it.
    while (at < file_size) {
      const std::optional<member_extent> e = extent(at);
      if ((p.size >= target && !(e && e->skippable)) || (!e && p.size > 0)) {  // !e: the rest is the next part
        ahead_at = at;
        ahead = e;
        break;
      }
      if (!e) {
        p.size = file_size - at;
        text_known = false;
        at = file_size;
        break;
      }
      at += e->size;
      p.size += e->size;
      if (e->text_size) *p.text_size += *e->text_size;
      text_known = text_known && e->text_size.has_value();
      const std::optional<std::uint64_t> most = e->text_size ? e->text_size : e->text_bound;
      bound = bound && most ? std::optional(*bound + *most) : std::nullopt;
    }
    p.last = at == file_size;
    if (!text_known || p.size == 0) p.text_size.reset();  // an empty file holds no member to say it
    if (!p.text_size && p.size > 0) p.text_bound = bound;
    return p;
  }

  // One block: liblzma holds it to the sizes the index records.
  std::optional<part> next_xz_block() {
    if (next_block == xz->size()) return std::nullopt;
    const xz_block& b = (*xz)[next_block++];
    return part{b.offset, b.size, b.text_size, layout::xz_block, b.check, false, false};
  }
};

splitter::splitter(format f, random_reader read, std::uint64_t file_size, std::uint64_t target)
    : s_(std::make_unique<state>(f, std::move(read), file_size, target)) {}
splitter::splitter(splitter&&) noexcept = default;
splitter& splitter::operator=(splitter&&) noexcept = default;
splitter::~splitter() = default;

std::optional<part> splitter::next() {
  state& s = *s_;
  if (s.f == format::xz && !s.started) {
    s.started = true;
    s.xz = xz_blocks(s.read, s.file_size);
    if (s.xz && s.xz->empty()) s.xz.reset();  // no blocks: the whole (small) file in order
    if (!s.xz) {
      s.at = s.file_size;
      return part{0, s.file_size, std::nullopt, layout::members, 0, true, true};
    }
  }
  return s.xz ? s.next_xz_block() : s.next_members();
}

std::vector<part> split(format f, const random_reader& read, std::uint64_t file_size, std::uint64_t target) {
  splitter s(f, read, file_size, target);
  std::vector<part> parts;
  while (std::optional<part> p = s.next()) parts.push_back(*p);
  return parts;
}

}  // namespace gutf8::internal::compress
