#include "engine/inputs.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "codec/boundary.hpp"
#include "engine/compressed.hpp"
#include "engine/gpu_parts.hpp"
#include "engine/on_threads.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal {
namespace {

[[noreturn]] void shrank() { throw error(errc::io_failure, "the file shrank while it was read"); }

// Files of the kernel's pseudo file systems claim a nominal size (sysfs: 4096, procfs: 0) that says
// nothing of what a read returns: they are read like a pipe, to the end.
bool size_is_nominal(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
      return true;
    default:
      return false;
  }
}

// pread until `buffer` is full; the bytes read (fewer only at the end of the file).
std::size_t pread_full(int fd, std::span<std::uint8_t> buffer, std::uint64_t at) {
  std::size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n = ::pread(fd, buffer.data() + got, buffer.size() - got, static_cast<off_t>(at + got));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_call_failure(errno);
    }
    got += static_cast<std::size_t>(n);
  }
  return got;
}

// Whether the file is still at least `end` bytes long (a size check costs a fraction of paging a
// window in ahead of its scan); true where the system cannot tell.
bool reaches(int fd, std::uint64_t end) {
  struct stat st {};
  return ::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) >= end;
}

piece_plan plan_of(std::uint64_t total, const run_plan& plan) {
  return piece_plan{total, std::max<std::uint64_t>(plan.pieces_of(total) / 4 * 4, 4)};  // UTF-32 cuts at 4
}

opened_input whole_from(std::span<const std::uint8_t> bytes, std::unique_ptr<job_input> in) {
  opened_input o;
  o.shape = job_shape::whole;
  o.whole = bytes;
  o.in = std::move(in);
  return o;
}

// In parts where the plan allows; under the CUDA backend only a zstd file the lanes take in parts
// (engine/gpu_parts.hpp): any other is read in order, its text going to the lanes.
bool in_parts(compress::format f, const compress::random_reader& read, std::uint64_t size, const run_plan& plan) {
  if (!plan.compressed_parts) return false;
  return !plan.gpu_only || (f == compress::format::zstd && lanes_take_in_parts(read, size));
}

// A compressed input read as its text: in parts (engine/compressed.hpp), or in order by one reader.
opened_input open_compressed(compress::format f, descriptor fd, std::uint64_t base, std::uint64_t size,
                             const run_plan& plan) {
  opened_input o;
  o.shape = job_shape::chunks;
  o.pieces = 0;
  o.holds_fd = true;
  if (in_parts(f, compress::pread_reader(fd.get(), base), size, plan))
    o.in = std::make_unique<compressed_input>(f, std::move(fd), base, size);
  else
    o.in = std::make_unique<stream_input>(std::move(fd), true, base + size, f);
  return o;
}

opened_input open_compressed(compress::format f, std::vector<std::uint8_t>&& owned,
                             std::span<const std::uint8_t> bytes, const run_plan& plan) {
  opened_input o;
  o.shape = job_shape::chunks;
  o.pieces = 0;
  const std::span<const std::uint8_t> held = owned.empty() ? bytes : std::span<const std::uint8_t>(owned);
  if (in_parts(f, compress::memory_reader(held), held.size(), plan))
    o.in = std::make_unique<compressed_input>(f, std::move(owned), bytes);
  else
    o.in = std::make_unique<stream_input>(std::move(owned), bytes, f);
  return o;
}

compress::format sniffed(std::span<const std::uint8_t> head, const run_plan& plan) {
  return plan.decompress ? compress::sniff(head) : compress::format::none;
}

opened_input open_memory(std::span<const std::byte> bytes, const run_plan& plan) {
  const std::span<const std::uint8_t> data(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  if (const compress::format f = sniffed(data, plan); f != compress::format::none) return open_compressed(f, {}, data, plan);
  if (!plan.pieces || data.size() <= plan.whole_bytes) return whole_from(data, std::make_unique<whole_input>(data));
  opened_input o;
  o.shape = job_shape::pieces;
  auto in = std::make_unique<random_input>(data, plan_of(data.size(), plan));
  o.pieces = in->plan().count();
  o.in = std::move(in);
  return o;
}

// A small file's bytes, read whole into the opener's buffer or into the job's own; compressed bytes
// are the job's own (their text is read later, part by part).
opened_input read_whole(const descriptor& fd, std::uint64_t base, std::size_t total, const run_plan& plan,
                        opener_state& opener) {
  std::span<std::uint8_t> reused = opener.buffer(total);
  std::vector<std::uint8_t> owned(reused.empty() ? total : 0);
  const std::span<std::uint8_t> bytes = reused.empty() ? std::span(owned) : reused;
  if (pread_full(fd.get(), bytes, base) != bytes.size()) shrank();
  // Only a borrowed descriptor's offset matters; an owned one is closed right away.
  if (!fd.owned()) (void)::lseek(fd.get(), static_cast<off_t>(base + total), SEEK_SET);
  if (const compress::format f = sniffed(bytes, plan); f != compress::format::none) {
    if (!reused.empty()) owned.assign(bytes.begin(), bytes.end());
    return open_compressed(f, std::move(owned), {}, plan);
  }
  auto in = reused.empty() ? std::make_unique<whole_input>(std::move(owned)) : std::make_unique<whole_input>(reused);
  const std::span<const std::uint8_t> view = in->bytes();
  return whole_from(view, std::move(in));
}

// A regular file of `size` bytes, of which the run reads from `base`.
opened_input open_regular(descriptor fd, std::uint64_t base, std::uint64_t size, const run_plan& plan,
                          opener_state& opener) {
  const std::uint64_t total = size > base ? size - base : 0;
  if (total <= plan.whole_bytes) return read_whole(fd, base, static_cast<std::size_t>(total), plan, opener);
  if (plan.decompress) {
    std::array<std::uint8_t, compress::sniff_bytes> head{};
    if (pread_full(fd.get(), head, base) != head.size()) shrank();
    if (const compress::format f = compress::sniff(head); f != compress::format::none)
      return open_compressed(f, std::move(fd), base, total, plan);
  }
  opened_input o;
  o.holds_fd = true;
  if (!plan.pieces) {
    o.shape = job_shape::chunks;
    o.pieces = 0;
    o.in = std::make_unique<stream_input>(std::move(fd), true, size, compress::format::none);
    return o;
  }
  o.shape = job_shape::pieces;
  auto in = std::make_unique<random_input>(std::move(fd), base, plan_of(total, plan), plan.read, plan.release_bytes);
  o.pieces = in->plan().count();
  o.in = std::move(in);
  return o;
}

}  // namespace

// ------------------------------------------------------------------------ descriptor ----

descriptor::descriptor(descriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)), owned_(std::exchange(o.owned_, false)) {}

descriptor& descriptor::operator=(descriptor&& o) noexcept {
  if (this != &o) {
    if (owned_ && fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    owned_ = std::exchange(o.owned_, false);
  }
  return *this;
}

descriptor::~descriptor() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

// ------------------------------------------------------------------------ histograms ----

std::uint64_t* histogram_parts::for_worker(std::size_t worker) {
  std::lock_guard lock(m_);
  std::vector<std::uint64_t>& part = parts_[worker];
  if (part.empty()) part.assign(code_space, 0);
  return part.data();
}

std::vector<std::uint64_t> histogram_parts::sum() const {
  std::lock_guard lock(m_);
  std::vector<std::uint64_t> total(code_space, 0);
  for (const auto& [worker, part] : parts_)
    for (std::size_t c = 0; c < code_space; ++c) total[c] += part[c];
  return total;
}

// ---------------------------------------------------------------------- random_input ----

random_input::random_input(std::span<const std::uint8_t> memory, const piece_plan& plan)
    : plan_(plan), bytes_(memory.data()) {}

random_input::random_input(descriptor fd, std::uint64_t base, const piece_plan& plan, read_method read,
                           std::uint64_t release_step)
    : plan_(plan), fd_(std::move(fd)), base_(base), release_step_(std::max<std::uint64_t>(release_step, 1)) {
  if (read != read_method::copy) {
    map_ = mapped_range::map(fd_.get(), base_, plan_.total);
    if (map_) bytes_ = map_->at(0);
    populate_ = read == read_method::map;
  }
}

random_input::~random_input() = default;

void random_input::read_once(std::span<std::uint8_t> buffer, std::uint64_t at) const {
  if (pread_full(fd_.get(), buffer, base_ + at) != buffer.size()) shrank();
}

const std::uint8_t* random_input::window(const piece_run& run, std::vector<std::uint8_t>& scratch) const {
  const std::uint64_t from = run.window_begin(plan_);
  const auto length = static_cast<std::size_t>(run.window_end(plan_) - from);
  if (bytes_ != nullptr) {
    // A page past the file's end would raise SIGBUS: a file that shrank is caught here instead,
    // unless it shrinks while the window is scanned.
    if (map_ && (!reaches(fd_.get(), base_ + from + length) || (populate_ && !map_->populate(from, length)))) shrank();
    return bytes_ + from;
  }
  scratch.resize(length);
  read_once(scratch, from);
  return scratch.data();
}

void random_input::read(std::span<std::uint8_t> buffer, std::uint64_t at, unsigned threads) const {
  if (bytes_ != nullptr && !map_) {
    std::copy_n(bytes_ + at, buffer.size(), buffer.data());
    return;
  }
  constexpr std::size_t slice = std::size_t{4} << 20;  // each thread's share, in pieces of this
  const std::uint64_t slices = (buffer.size() + slice - 1) / slice;
  on_threads(slices, threads, [&](std::uint64_t i, unsigned) {
    const std::size_t from = static_cast<std::size_t>(i) * slice;
    read_once(buffer.subspan(from, std::min(slice, buffer.size() - from)), at + from);
  });
}

lines_before random_input::count_lines(std::uint64_t end, std::size_t unit, unsigned threads) const {
  constexpr std::size_t block = std::size_t{1} << 20;  // a multiple of 4: UTF-32 stays aligned
  const std::uint64_t blocks = (end + block - 1) / block;
  std::vector<lines_before> per_block(blocks);
  threads = std::max(threads, 1u);
  std::vector<std::vector<std::uint8_t>> buffers(threads);
  on_threads(blocks, threads, [&](std::uint64_t b, unsigned t) {
    const std::uint64_t from = b * block;
    const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(block, end - from));
    // A file is read again with pread: through its map, every page would join the process.
    const std::uint8_t* p = bytes_ != nullptr && !map_ ? bytes_ + from : nullptr;
    if (p == nullptr) {
      buffers[t].resize(block);
      read_once(std::span(buffers[t]).first(length), from);
      p = buffers[t].data();
    }
    per_block[b] = count_lines_before(p, length, unit, from);
  });
  lines_before total;
  for (const lines_before& p : per_block) {
    total.newlines += p.newlines;
    total.line_start = std::max(total.line_start, p.line_start);
  }
  return total;
}

void random_input::release_before(std::uint64_t end) {
  if (!map_ || end < released_ + release_step_ + piece_lead) return;
  const std::uint64_t upto = (end - piece_lead) / release_step_ * release_step_;  // a later window reads 3 bytes back
  map_->release(released_, upto - released_);
  released_ = upto;
}

void random_input::consumed(std::uint64_t bytes) const {
  if (fd_.get() >= 0) (void)::lseek(fd_.get(), static_cast<off_t>(base_ + bytes), SEEK_SET);
}

// ---------------------------------------------------------------------- stream_input ----

stream_input::stream_input(descriptor fd, bool regular, std::optional<std::uint64_t> size,
                           std::optional<compress::format> format)
    : fd_(std::move(fd)), regular_(regular), size_(size), format_(format) {
  if (regular_) (void)::posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint
  if (format_ && *format_ != compress::format::none) open_decompressor(*format_, {});
}

stream_input::stream_input(std::vector<std::uint8_t>&& owned, std::span<const std::uint8_t> bytes,
                           compress::format format)
    : owned_(std::move(owned)), memory_(owned_.empty() ? bytes : std::span<const std::uint8_t>(owned_)),
      in_memory_(true), format_(format) {
  if (format != compress::format::none) open_decompressor(format, {});
}

stream_input::~stream_input() = default;

void stream_input::open_decompressor(compress::format f, std::span<const std::uint8_t> head) {
  compressed = compression_of(f);
  decompressor_ = std::make_unique<compress::decompressor>();
  decompressor_->open(f, [this](std::span<std::uint8_t> b) { return read_raw(b, stop_); }, head);
}

// A pipe's first bytes say whether it is compressed; read here, where the read can be stopped.
void stream_input::sniff(const std::function<bool()>& stop) {
  std::vector<std::uint8_t> head(compress::sniff_bytes);
  head.resize(read_raw(head, stop));
  format_ = compress::sniff(head);
  if (*format_ != compress::format::none)
    open_decompressor(*format_, head);
  else
    unread_ = std::move(head);
}

std::size_t stream_input::read(std::span<std::uint8_t> buffer, const std::function<bool()>& stop) {
  if (!format_) sniff(stop);
  if (!decompressor_) {
    const std::size_t n = read_raw(buffer, stop);
    ended_ = raw_ended_;
    return n;
  }
  stop_ = stop;
  std::size_t filled = 0;
  while (filled < buffer.size() && !ended_) {
    const std::size_t n = decompressor_->read(buffer.subspan(filled));
    if (n == 0) {
      ended_ = true;
      trailing_ignored = decompressor_->ignored_from();
    }
    filled += n;
  }
  return filled;
}

std::size_t stream_input::read_raw(std::span<std::uint8_t> buffer, const std::function<bool()>& stop) {
  std::size_t filled = std::min(unread_.size(), buffer.size());
  std::copy_n(unread_.begin(), filled, buffer.begin());
  unread_.erase(unread_.begin(), unread_.begin() + static_cast<std::ptrdiff_t>(filled));
  if (in_memory_) {
    const std::size_t n = std::min(memory_.size(), buffer.size() - filled);
    std::copy_n(memory_.begin(), n, buffer.begin() + static_cast<std::ptrdiff_t>(filled));
    memory_ = memory_.subspan(n);
    raw_ended_ = memory_.empty();
    return filled + n;
  }
  while (filled < buffer.size() && !raw_ended_) {
    if (!regular_) {
      if (stop && stop()) break;
      pollfd p{fd_.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
      // ready < 0 (other errors) or an event: read() reports what is wrong, or the data / EOF.
    }
    const ssize_t n = ::read(fd_.get(), buffer.data() + filled, buffer.size() - filled);
    if (n == 0) {
      raw_ended_ = true;
      // A regular file that ends before the size it had when opened shrank under the reader.
      if (regular_ && size_) {
        const off_t at = ::lseek(fd_.get(), 0, SEEK_CUR);
        if (at >= 0 && static_cast<std::uint64_t>(at) < *size_) shrank();
      }
      break;
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw system_call_failure(errno);
    }
    filled += static_cast<std::size_t>(n);
  }
  return filled;
}

chunk stream_input::next_chunk(std::size_t chunk_bytes, bool utf32, const std::function<bool()>& stop) {
  chunk c;
  {
    std::lock_guard lock(m_);
    if (!spare_.empty()) {
      c.bytes = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  const std::size_t head = carry_.size();
  c.bytes.resize(head + chunk_bytes);
  std::copy(carry_.begin(), carry_.end(), c.bytes.begin());
  const std::size_t got = read(std::span(c.bytes).subspan(head), stop);
  const std::size_t n = head + got;
  c.bytes.resize(n);
  c.offset = offset_;
  c.at_end = ended_;
  // The cut needs 3 bytes before it in the chunk: chunk_bytes is at least 16.
  c.end = c.at_end ? n : utf32 ? n / 4 * 4 : n < 3 ? n : unit_start_at_or_after(c.bytes.data(), n - 3, n, false);
  if (!c.at_end && stop && stop() && got < chunk_bytes) c.end = n;  // stopped: nothing follows
  carry_.assign(c.bytes.begin() + static_cast<std::ptrdiff_t>(c.end), c.bytes.end());
  offset_ += c.end;
  return c;
}

void stream_input::put(std::uint64_t k, chunk&& c) { slots_.put(k, std::move(c)); }

chunk stream_input::take(std::uint64_t k) { return slots_.take(k); }

void stream_input::recycle(std::vector<std::uint8_t>&& bytes) {
  std::lock_guard lock(m_);
  if (spare_.size() < 4) spare_.push_back(std::move(bytes));
}

// ------------------------------------------------------------------------- opening ----

bool opener_state::size_is_nominal(int fd, std::uint64_t device) {
  if (device_ != device) {
    nominal_ = internal::size_is_nominal(fd);
    device_ = device;
  }
  return nominal_;
}

std::span<std::uint8_t> opener_state::buffer(std::size_t n) {
  if (!reuse_buffer_ || n == 0) return {};
  if (buffer_.size() < n) buffer_.resize(n);  // kept at its largest: no zeroing each time
  return std::span(buffer_).first(n);
}

opened_input open_input(const input& what, const run_plan& plan, bool /*utf32*/, opener_state& opener) {
  if (what.what() == input::kind::memory) return open_memory(what.bytes(), plan);
  descriptor fd;
  std::uint64_t base = 0;
  if (what.what() == input::kind::file) {
    const int raw = ::open(what.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (raw < 0) throw system_call_failure(errno);
    fd = descriptor(raw, true);
  } else {
    fd = descriptor(what.fd(), false);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw system_call_failure(errno);
  if (S_ISDIR(st.st_mode)) throw system_call_failure(EISDIR);
  if (S_ISREG(st.st_mode) && !opener.size_is_nominal(fd.get(), st.st_dev)) {
    if (what.what() == input::kind::descriptor) {
      const off_t at = ::lseek(fd.get(), 0, SEEK_CUR);
      base = at < 0 ? 0 : static_cast<std::uint64_t>(at);
    }
    return open_regular(std::move(fd), base, static_cast<std::uint64_t>(st.st_size), plan, opener);
  }
  opened_input o;
  o.shape = job_shape::chunks;
  o.pieces = 0;
  o.holds_fd = true;
  // A pipe's format is found on its first read, which can be stopped.
  o.in = std::make_unique<stream_input>(std::move(fd), false, std::nullopt,
                                        plan.decompress ? std::nullopt : std::optional(compress::format::none));
  return o;
}

compress::format format_of(compression c) noexcept { return static_cast<compress::format>(c); }
compression compression_of(compress::format f) noexcept { return static_cast<compression>(f); }
static_assert(static_cast<int>(compress::format::lz4) == static_cast<int>(compression::lz4) &&
              static_cast<int>(compress::format::bzip2) == static_cast<int>(compression::bzip2) &&
              static_cast<int>(compress::format::xz) == static_cast<int>(compression::xz) &&
              static_cast<int>(compress::format::zstd) == static_cast<int>(compression::zstd) &&
              static_cast<int>(compress::format::gzip) == static_cast<int>(compression::gzip));

}  // namespace gutf8::internal
