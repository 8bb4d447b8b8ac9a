#include "engine/compressed.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "codec/boundary.hpp"
#include "engine/gpu_parts.hpp"
#include "gutf8/error.hpp"

namespace gutf8 {

std::string_view name(compression c) noexcept { return internal::compress::name(internal::format_of(c)); }

compression compression_by_suffix(std::string_view path) noexcept {
  return internal::compression_of(internal::compress::by_suffix(path));
}

compression sniff_compression(std::span<const std::byte> first_bytes) noexcept {
  return internal::compression_of(internal::compress::sniff(
      {reinterpret_cast<const std::uint8_t*>(first_bytes.data()), first_bytes.size()}));
}

namespace internal {
namespace {

// Consecutive parts of whole members go into one slot while it stays small: its text within a
// chunk where the output must be held, else its compressed bytes within a quarter chunk.
bool joins(const compress::part& a, const compress::part& b, std::uint64_t chunk_bytes, bool output,
           std::uint64_t gpu_run_bytes) {
  if (a.holds != compress::layout::members || b.holds != compress::layout::members) return false;
  if (gpu_run_bytes != 0 && a.text_size && b.text_size)  // a GPU lane's run: it holds text and bytes
    return *a.text_size + *b.text_size <= gpu_run_bytes && a.size + b.size <= gpu_run_bytes;
  // A frame of unknown text joined to frames of known text would send them all to the CPU decoder.
  if (gpu_run_bytes != 0 && (a.text_size.has_value() || b.text_size.has_value())) return false;
  if (!output) return a.size + b.size <= chunk_bytes / 4;
  const std::optional<std::uint64_t> ta = a.most_text(), tb = b.most_text();
  return ta && tb && *ta + *tb <= chunk_bytes && a.size + b.size <= chunk_bytes;
}

// A part's text opened in place (memory), copied whole into `compressed` when that is small (then
// gzip members and zstd frames decode at once), or read through the input's reader, a buffer at a time.
void open_part(part_text& t, const compressed_input& in, const compress::part& p, std::span<const std::uint8_t> memory,
               scratch_bytes* compressed, std::uint64_t at_once) {
  if (!memory.empty()) {
    t.open(in.format(), p, memory.subspan(static_cast<std::size_t>(p.offset), static_cast<std::size_t>(p.size)));
  } else if (compressed != nullptr && p.size <= at_once) {
    const std::span<std::uint8_t> bytes = compressed->at_least(static_cast<std::size_t>(p.size));
    in.reader()(bytes, p.offset);
    t.open(in.format(), p, bytes);
  } else {
    t.open(in.format(), p, in.reader());
  }
}

// A part too big to hold decompressed by the reader itself, in chunks that any worker processes.
bool stream_part(const run_context& ctx, job& j, compressed_input& in, const compress::part& p, std::uint64_t& k,
                 const std::function<bool()>& help) {
  part_text text;
  open_part(text, in, p, in.memory(), nullptr, 0);
  part_block b;
  for (chunk c;; c = chunk{}) {
    c.bytes.resize(text.room(ctx.plan.chunk_bytes));
    if (!text.next(c.bytes, b)) break;
    c.bytes.resize(b.size);
    c.end = b.end;
    part_slot s{p, std::move(c), b.head_open, b.tail_open};
    if (!ctx.work.reserve_chunk(j, help)) return false;
    in.put(k, std::move(s));
    ++k;
    ctx.work.chunk_readable(j);
  }
  if (p.last) in.trailing_ignored = text.decoder().ignored_from();
  return true;
}

}  // namespace

// ------------------------------------------------------------------------ part_text ----

void part_text::restart() {
  carried_ = 0;
  first_ = true;
  ended_ = false;
}

void part_text::open(compress::format f, const compress::part& p, std::span<const std::uint8_t> bytes) {
  restart();
  d_.open(f, p, bytes);
}

void part_text::open(compress::format f, const compress::part& p, compress::random_reader read) {
  restart();
  d_.open(f, p, std::move(read));
}

std::size_t part_text::room(std::size_t block_bytes) const noexcept {
  const std::size_t block = carried_ + std::max<std::size_t>(block_bytes, 16);
  // A byte past the whole text lets the first read find the end: the part is then one block.
  const std::optional<std::uint64_t> whole = first_ ? d_.whole_text() : std::nullopt;
  if (at_once(whole, block_bytes)) return std::max(block, static_cast<std::size_t>(*whole) + 1);
  return block;
}

bool part_text::next(std::span<std::uint8_t> buffer, part_block& b) {
  if (ended_) return false;
  std::copy_n(carry_.data(), carried_, buffer.data());
  std::size_t n = carried_;
  while (n < buffer.size()) {
    const std::size_t got = d_.read(std::span(buffer).subspan(n));
    if (got == 0) {
      ended_ = true;
      break;
    }
    n += got;
  }
  if (ended_ && n == 0 && !first_) return false;  // the last block ended at a cut
  b = part_block{buffer.data(), n, n, std::exchange(first_, false), ended_};
  // The cut needs 3 bytes before it: a block that goes on holds at least 16.
  if (!ended_) b.end = unit_start_at_or_after(buffer.data(), n - 3, n, false);
  carried_ = n - b.end;
  std::copy_n(buffer.data() + b.end, carried_, carry_.data());
  return true;
}

// -------------------------------------------------------------------- compressed_input ----

compressed_input::compressed_input(compress::format f, descriptor fd, std::uint64_t base, std::uint64_t size)
    : format_(f), fd_(std::move(fd)), base_(base), size_(size), read_(compress::pread_reader(fd_.get(), base)),
      splitter_(f, read_, size, 1) {
  compressed = compression_of(f);
}

compressed_input::compressed_input(compress::format f, std::vector<std::uint8_t>&& owned,
                                   std::span<const std::uint8_t> bytes)
    : format_(f), size_(owned.empty() ? bytes.size() : owned.size()), owned_(std::move(owned)),
      memory_(owned_.empty() ? bytes : std::span<const std::uint8_t>(owned_)), read_(compress::memory_reader(memory_)),
      splitter_(f, read_, size_, 1) {
  compressed = compression_of(f);
}

std::optional<compress::part> compressed_input::next_part(std::uint64_t chunk_bytes, bool output,
                                                          std::uint64_t gpu_run_bytes) {
  if (!std::exchange(started_, true)) ahead_ = splitter_.next();
  if (!ahead_) return std::nullopt;
  compress::part p = *ahead_;
  if (format_ != compress::format::zstd) gpu_run_bytes = 0;
  for (ahead_ = splitter_.next(); ahead_ && joins(p, *ahead_, chunk_bytes, output, gpu_run_bytes);
       ahead_ = splitter_.next()) {
    p.size += ahead_->size;
    const std::optional<std::uint64_t> most = p.most_text(), more = ahead_->most_text();
    p.text_size = p.text_size && ahead_->text_size ? std::optional(*p.text_size + *ahead_->text_size) : std::nullopt;
    p.text_bound = p.text_size || !most || !more ? std::nullopt : std::optional(*most + *more);
    p.last = ahead_->last;
  }
  return p;
}

void compressed_input::read_all() const {
  if (fd_.get() >= 0) (void)::lseek(fd_.get(), static_cast<off_t>(base_ + size_), SEEK_SET);
}

void compressed_input::put(std::uint64_t k, part_slot&& s) { slots_.put(k, std::move(s)); }

part_slot compressed_input::take(std::uint64_t k) { return slots_.take(k); }

// ------------------------------------------------------------------------- workers ----

run_result part_worker::process(compressed_input& in, const piece_run& run, block_processor& processor,
                                const run_context& ctx, std::uint64_t* histogram) {
  part_slot s = in.take(run.first);
  return process(in, s, run, processor, ctx, histogram);
}

run_result part_worker::process(compressed_input& in, part_slot& s, const piece_run& run, block_processor& processor,
                                const run_context& ctx, std::uint64_t* histogram) {
  if (s.text) return process_text(s, run, processor, ctx, histogram);
  const operation op = ctx.config.stream.operation;
  run_result r;
  r.run = run;
  r.edges.emplace();
  r.outcome.counted_lines = true;
  auto output = std::make_shared<std::vector<std::uint8_t>>();
  try {
    open_part(text_, in, s.part, in.memory(), &compressed_, part_text::whole_blocks * ctx.plan.chunk_bytes);
    part_block b;
    while (text_.next(buffer_.at_least(text_.room(ctx.plan.chunk_bytes)), b)) {
      if (b.head_open && b.tail_open) {  // the part in one block: its output straight into the run's buffer
        auto [out, release] = outputs_.acquire(output_room(op, b.size));
        append_outcome(r.outcome, process_part_block(processor, ctx.config, b, out, histogram, *r.edges));
        r.output = {out, out == nullptr ? 0 : r.outcome.result.written};
        r.release = std::move(release);
        break;
      }
      scratch_.resize(output_room(op, b.size));
      const piece_outcome o = process_part_block(processor, ctx.config, b, scratch_.empty() ? nullptr : scratch_.data(),
                                                 histogram, *r.edges);
      output->insert(output->end(), scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(o.result.written));
      append_outcome(r.outcome, o);
      if (o.result.stopped) break;
    }
  } catch (...) {
    text_ = part_text{};  // a decoder that failed starts afresh
    throw;
  }
  if (s.part.last && !r.outcome.result.stopped) in.trailing_ignored = text_.decoder().ignored_from();
  if (!output->empty()) {
    r.output = *output;
    r.release = [output]() mutable { output.reset(); };
  }
  return r;
}

run_result part_worker::process_text(part_slot& s, const piece_run& run, block_processor& processor,
                                     const run_context& ctx, std::uint64_t* histogram) {
  chunk& c = *s.text;
  auto [out, release] = outputs_.acquire(output_room(ctx.config.stream.operation, c.bytes.size()));
  run_result r;
  r.run = run;
  r.edges.emplace();
  r.outcome = process_part_block(processor, ctx.config, part_block{c.bytes.data(), c.bytes.size(), c.end, s.head_open, s.tail_open},
                                 out, histogram, *r.edges);
  r.output = {out, out == nullptr ? 0 : r.outcome.result.written};
  r.release = std::move(release);
  return r;
}

void read_parts(const run_context& ctx, job& j, compressed_input& in, std::uint64_t& k,
                const std::function<bool()>& help) {
  const bool output = output_width(ctx.config.stream.operation) != 0;
  const std::uint64_t chunk_bytes = ctx.plan.chunk_bytes;
  // GPU lanes that decompress zstd frames take a run of them at once (engine/gpu_parts.hpp).
  const std::uint64_t gpu_run_bytes = ctx.plan.gpu_only && gpu_decompresses(ctx.config) ? ctx.plan.gpu_run_bytes : 0;
  while (const std::optional<compress::part> p = in.next_part(chunk_bytes, output, gpu_run_bytes)) {
    // Without output a worker holds any part in bounded memory; with it, only a part it decodes at once.
    if (output && !part_text::at_once(p->most_text(), chunk_bytes)) {
      if (!stream_part(ctx, j, in, *p, k, help)) return;
      continue;
    }
    if (!ctx.work.reserve_chunk(j, help)) return;
    in.put(k, part_slot{*p, std::nullopt});
    ++k;
    ctx.work.chunk_readable(j);
  }
  in.read_all();
}

// ------------------------------------------------------------------------- outputs ----

output_packer::output_packer(const output_compression& c)
    : c_(format_of(c.format), c.level != 0 ? c.level : compress::default_level(format_of(c.format))) {}

std::size_t output_packer::bound(std::size_t text) const {
  const std::size_t whole = text / most_text, rest = text % most_text;
  return whole * c_.bound(most_text) + (rest != 0 || whole == 0 ? c_.bound(rest) : 0);
}

std::size_t output_packer::pack_into(std::span<const std::uint8_t> text, std::uint8_t* out) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < text.size(); at += most_text) {
    const auto piece = text.subspan(at, std::min(most_text, text.size() - at));
    n += c_.compress(piece, {out + n, c_.bound(piece.size())});
  }
  return n;
}

std::vector<std::uint8_t> output_packer::pack(std::span<const std::uint8_t> text) {
  const std::span<std::uint8_t> room = scratch_.at_least(bound(text.size()));
  return {room.begin(), room.begin() + static_cast<std::ptrdiff_t>(pack_into(text, room.data()))};
}

std::vector<std::uint8_t> output_packer::empty() {
  const std::span<std::uint8_t> room = scratch_.at_least(c_.bound(0));
  return {room.begin(), room.begin() + static_cast<std::ptrdiff_t>(c_.compress({}, room))};
}

void output_packer::pack(run_result& r) {
  if (r.output.empty()) return;
  auto [out, release] = members_.acquire(bound(r.output.size()));
  const std::size_t n = pack_into(r.output, out);
  if (r.release) std::exchange(r.release, {})();  // the text's memory goes back at once
  r.output = {out, n};
  r.release = std::move(release);
}

// ------------------------------------------------------------------------- text_at ----

namespace {

compress::part whole_part(std::uint64_t size) {
  compress::part p;
  p.size = size;
  return p;
}

// Bytes [offset, offset + count) of the decompressor's text, read from its start.
std::vector<std::byte> text_range(compress::decompressor& d, std::uint64_t offset, std::size_t count) {
  std::vector<std::uint8_t> buffer(std::size_t{1} << 16);
  std::vector<std::byte> out;
  for (std::uint64_t at = 0; out.size() < count;) {
    const std::size_t n = d.read(buffer);
    if (n == 0) break;
    const std::uint64_t from = std::max(at, offset), to = std::min<std::uint64_t>(at + n, offset + count);
    if (from < to) {
      const auto* p = reinterpret_cast<const std::byte*>(buffer.data());
      out.insert(out.end(), p + (from - at), p + (to - at));
    }
    at += n;
  }
  return out;
}

std::vector<std::byte> from_memory(std::span<const std::uint8_t> bytes, std::uint64_t offset, std::size_t count,
                                   bool decompress) {
  const compress::format f = decompress ? compress::sniff(bytes) : compress::format::none;
  if (f == compress::format::none) {
    const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
    const std::uint64_t from = std::min<std::uint64_t>(offset, bytes.size());
    return {p + from, p + std::min<std::uint64_t>(bytes.size(), from + count)};
  }
  compress::decompressor d;
  d.open(f, whole_part(bytes.size()), bytes);
  return text_range(d, offset, count);
}

std::vector<std::byte> from_file(int fd, std::uint64_t offset, std::size_t count, bool decompress) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw system_call_failure(errno);
  if (!S_ISREG(st.st_mode)) throw error(errc::invalid_argument, "only a regular file's text can be read again");
  const off_t at = ::lseek(fd, 0, SEEK_CUR);
  const std::uint64_t base = at < 0 ? 0 : static_cast<std::uint64_t>(at);
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size) > base ? st.st_size - base : 0;
  const compress::random_reader read = compress::pread_reader(fd, base);
  std::array<std::uint8_t, compress::sniff_bytes> head{};
  const auto first = std::span(head).first(static_cast<std::size_t>(std::min<std::uint64_t>(head.size(), size)));
  read(first, 0);
  const compress::format f = decompress ? compress::sniff(first) : compress::format::none;
  if (f != compress::format::none) {
    compress::decompressor d;
    d.open(f, whole_part(size), read);
    return text_range(d, offset, count);
  }
  std::vector<std::byte> out(static_cast<std::size_t>(std::min<std::uint64_t>(count, size - std::min(offset, size))));
  read({reinterpret_cast<std::uint8_t*>(out.data()), out.size()}, offset);
  return out;
}

}  // namespace
}  // namespace internal

std::vector<std::byte> text_at(const input& in, std::uint64_t offset, std::size_t count, bool decompress) {
  if (in.what() == input::kind::memory)
    return internal::from_memory({reinterpret_cast<const std::uint8_t*>(in.bytes().data()), in.bytes().size()}, offset,
                                 count, decompress);
  if (in.what() == input::kind::descriptor) return internal::from_file(in.fd(), offset, count, decompress);
  const int fd = ::open(in.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw system_call_failure(errno);
  const internal::descriptor owned(fd, true);
  return internal::from_file(fd, offset, count, decompress);
}

}  // namespace gutf8
