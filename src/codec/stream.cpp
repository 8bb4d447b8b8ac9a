// gutf8::stream: a pimpl over internal::stream_core, which holds the carry and all the
// bookkeeping; this file only adapts the output (a vector, or caller memory) and keeps a view
// of the block processor for its GPU timings. Also gutf8::host_buffer (page-locked when the
// options send the input to the GPU).
#include "gutf8/stream.hpp"

#include <new>
#include <utility>
#include <string>

#include "codec/gpu_backend.hpp"
#include "codec/stream_core.hpp"
#include "gutf8/error.hpp"

namespace gutf8 {

struct stream::impl {
  const internal::block_processor* processor;  // owned by the core
  internal::stream_core core;

  explicit impl(const stream_config& config) : impl(config, internal::make_processor(config.backend)) {}
  impl(const stream_config& config, std::unique_ptr<internal::block_processor> p)
      : processor(p.get()), core(config, std::move(p)) {}

  std::size_t run_into(std::span<const std::byte> chunk, bool at_end, std::span<std::byte> out) {
    const std::size_t need = core.max_output(chunk.size());
    if (out.size() < need)
      throw error(errc::output_too_small, "stream output holds " + std::to_string(out.size()) +
                                              " bytes, the worst case needs " + std::to_string(need));
    return core.feed({reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size()}, at_end,
                        need == 0 ? nullptr : reinterpret_cast<std::uint8_t*>(out.data()));
  }

  bool run(std::span<const std::byte> chunk, bool at_end, std::vector<std::byte>& out) {
    const std::size_t old = out.size();
    out.resize(old + core.max_output(chunk.size()));
    const std::size_t written =
        core.feed({reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size()}, at_end,
                     reinterpret_cast<std::uint8_t*>(out.data()) + old);
    out.resize(old + written);
    return !core.stopped();
  }
};

stream::stream(const stream_config& config) : impl_(std::make_unique<impl>(config)) {}
stream::~stream() = default;
stream::stream(stream&&) noexcept = default;
stream& stream::operator=(stream&&) noexcept = default;

bool stream::feed(std::span<const std::byte> chunk, std::vector<std::byte>& out) {
  return impl_->run(chunk, false, out);
}

bool stream::finish(std::vector<std::byte>& out) { return impl_->run({}, true, out); }

std::size_t stream::max_output(std::size_t chunk_bytes) const noexcept {
  return impl_->core.max_output(chunk_bytes);
}

std::size_t stream::feed_into(std::span<const std::byte> chunk, std::span<std::byte> out) {
  return impl_->run_into(chunk, false, out);
}

std::size_t stream::finish_into(std::span<std::byte> out) { return impl_->run_into({}, true, out); }

stream_timings stream::timings() const { return impl_->processor->timings(); }

const text_stats& stream::stats() const noexcept { return impl_->core.stats(); }
bool stream::stopped() const noexcept { return impl_->core.stopped(); }
std::span<const error_unit> stream::listed_errors() const noexcept {
  return impl_->core.listed_errors();
}
std::vector<code_point_count> stream::top(std::size_t n) const { return impl_->core.top(n); }


// ---------------------------------------------------------------------- host_buffer ----

host_buffer::host_buffer(std::size_t bytes, const options& opt) : size_(bytes) {
  if (bytes == 0) return;
  if (internal::gpu_selected(opt)) {
    data_ = static_cast<std::byte*>(internal::allocate_pinned(bytes));
    pinned_ = data_ != nullptr;
  }
  if (data_ == nullptr) data_ = static_cast<std::byte*>(::operator new(bytes));
}

host_buffer::~host_buffer() { release(); }

host_buffer::host_buffer(host_buffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
      pinned_(std::exchange(o.pinned_, false)) {}

host_buffer& host_buffer::operator=(host_buffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    pinned_ = std::exchange(o.pinned_, false);
  }
  return *this;
}

void host_buffer::release() noexcept {
  if (data_ == nullptr) return;
  if (pinned_) internal::free_pinned(data_);
  else ::operator delete(data_);
  data_ = nullptr;
  size_ = 0;
  pinned_ = false;
}

}  // namespace gutf8
