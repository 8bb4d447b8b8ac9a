#include "cli/pipeline.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/input.hpp"
#include "cli/io.hpp"

namespace gutf8::cli {
namespace {

// Buffers that are missing, too small, or pageable where the GPU wants page-locked memory are
// replaced; the others are kept.
void fit(std::vector<host_buffer>& ring, std::size_t count, std::size_t bytes, const options& backend,
         bool want_pinned) {
  ring.resize(count);
  for (host_buffer& b : ring) {
    if (b.size() >= bytes && (b.pinned() || !want_pinned)) continue;
    b = host_buffer();  // release before allocating the replacement
    b = host_buffer(bytes, backend);
  }
}

}  // namespace

void pipeline::prepare(std::size_t chunk_bytes, std::size_t output_bytes, const options& backend) {
  const bool want_pinned = host_buffer(1, backend).pinned();
  fit(in_, input_buffers, chunk_bytes, backend, want_pinned);
  if (output_bytes != 0) fit(out_, output_buffers, output_bytes, backend, want_pinned);
}

void pipeline::run(input_file& in, gutf8::stream& stream, const options& backend,
                   std::size_t chunk_bytes, fd_writer* sink, progress_bar& bar, stage_times& times) {
  // Room for any one feed: max_output counts the carried bytes of the moment (at most 3).
  const std::size_t output_bytes = sink ? stream.max_output(chunk_bytes + 4) : 0;
  prepare(chunk_bytes, output_bytes, backend);

  struct filled {
    std::size_t buffer = 0, bytes = 0;  // buffer: an index into in_
    bool eof = false;
  };
  struct produced {
    std::size_t buffer = 0, bytes = 0;  // buffer: an index into out_
    bool end = false;
  };
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::size_t> in_free, out_free;
  std::deque<filled> in_full;
  std::deque<produced> out_full;
  bool cancel = false;                  // guarded by m
  std::atomic<bool> cancel_read{false};  // for a read blocked on a pipe
  std::exception_ptr read_error, write_error;
  steady_clock::duration read_time{}, write_time{};
  for (std::size_t k = 0; k < input_buffers; ++k) in_free.push_back(k);
  if (sink)
    for (std::size_t k = 0; k < output_buffers; ++k) out_free.push_back(k);

  const auto reader = [&] {
    for (;;) {
      std::size_t buffer = 0;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return cancel || !in_free.empty(); });
        if (cancel) return;
        buffer = in_free.front();
        in_free.pop_front();
      }
      filled f{buffer, 0, false};
      try {
        const auto t0 = steady_clock::now();
        f.bytes = in.read(in_[buffer].span().first(chunk_bytes), &cancel_read);
        read_time += steady_clock::now() - t0;
        f.eof = f.bytes < chunk_bytes;  // read() fills the buffer unless the input ended
      } catch (...) {
        std::lock_guard lock(m);
        read_error = std::current_exception();
        f = filled{buffer, 0, true};
      }
      {
        std::lock_guard lock(m);
        in_full.push_back(f);
      }
      cv.notify_all();
      if (f.eof) return;
    }
  };

  const auto writer = [&] {
    for (;;) {
      produced p;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return cancel || !out_full.empty(); });
        if (cancel) return;
        p = out_full.front();
        out_full.pop_front();
      }
      if (p.end) return;
      try {
        const auto t0 = steady_clock::now();
        sink->write(out_[p.buffer].span().first(p.bytes));
        write_time += steady_clock::now() - t0;
      } catch (...) {
        std::lock_guard lock(m);
        write_error = std::current_exception();
        cancel = true;  // nothing more can be written: stop everyone
        cancel_read = true;
      }
      {
        std::lock_guard lock(m);
        out_free.push_back(p.buffer);
      }
      cv.notify_all();
    }
  };

  std::jthread read_thread(reader);
  std::optional<std::jthread> write_thread;
  if (sink) write_thread.emplace(writer);

  // However this ends, both threads are stopped and joined before the buffers or `in` go away.
  struct stopper {
    std::mutex& m;
    std::condition_variable& cv;
    bool& cancel;
    std::atomic<bool>& cancel_read;
    std::jthread& r;
    std::optional<std::jthread>& w;
    ~stopper() {
      {
        std::lock_guard lock(m);
        cancel = true;
        cancel_read = true;
      }
      cv.notify_all();
      if (w && w->joinable()) w->join();
      if (r.joinable()) r.join();
    }
  } stop{m, cv, cancel, cancel_read, read_thread, write_thread};

  // Lets the writer drain what is queued, then stops it; rethrows its failure.
  const auto finish_writing = [&] {
    if (!write_thread) return;
    {
      std::lock_guard lock(m);
      out_full.push_back(produced{0, 0, true});
    }
    cv.notify_all();
    write_thread->join();
    if (write_error) std::rethrow_exception(write_error);
  };
  constexpr std::size_t no_buffer = ~std::size_t{0};
  const auto take_output = [&]() -> std::size_t {
    if (!sink) return no_buffer;
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return write_error || !out_free.empty(); });
    if (write_error) std::rethrow_exception(write_error);
    const std::size_t buffer = out_free.front();
    out_free.pop_front();
    return buffer;
  };
  const auto output_of = [&](std::size_t buffer) {
    return buffer == no_buffer ? std::span<std::byte>{} : out_[buffer].span();
  };
  const auto give_output = [&](std::size_t buffer, std::size_t bytes) {
    if (buffer == no_buffer) return;
    {
      std::lock_guard lock(m);
      if (bytes == 0) out_free.push_back(buffer);
      else out_full.push_back(produced{buffer, bytes, false});
    }
    cv.notify_all();
  };

  for (;;) {
    filled f;
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return !in_full.empty(); });
      f = in_full.front();
      in_full.pop_front();
    }
    if (f.eof && f.bytes == 0 && read_error) {
      finish_writing();  // what came before the failed read is kept, as without the threads
      std::rethrow_exception(read_error);
    }
    if (f.bytes != 0) {
      times.bytes += f.bytes;
      const std::size_t out = take_output();
      std::size_t written = 0;
      {
        stage_timer t(times.process);
        written = stream.feed_into(in_[f.buffer].span().first(f.bytes), output_of(out));
      }
      give_output(out, written);
      bar.advance(f.bytes);
    }
    {
      std::lock_guard lock(m);
      in_free.push_back(f.buffer);
    }
    cv.notify_all();
    if (stream.stopped()) break;  // strict mode stopped at an error unit
    if (f.eof) {
      const std::size_t out = take_output();
      std::size_t written = 0;
      {
        stage_timer t(times.process);
        written = stream.finish_into(output_of(out));
      }
      give_output(out, written);
      break;
    }
  }
  finish_writing();
  {
    std::lock_guard lock(m);
    cancel = true;
    cancel_read = true;
  }
  cv.notify_all();
  read_thread.join();
  times.read += read_time;
  times.write += write_time;
}

}  // namespace gutf8::cli
