// Runs the device API (include/gutf8/device.hpp) on host data and the CPU codec on the same
// data, and compares them byte for byte, summary included.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cuda/device_variants.hpp"
#include "gutf8/codec.hpp"
#include "cuda/cuda_resources.hpp"
#include "utf8/utf8_rules.hpp"
#include "gutf8/device.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace gutf8::test::gpu {

using bytes = std::vector<std::uint8_t>;

enum class op {
  validate,
  decode_fused,
  decode_staged,
  repair,
  encode_fused,
  encode_compact
};

inline const char* name(op o) {
  switch (o) {
    case op::validate: return "validate";
    case op::decode_fused: return "decode_fused";
    case op::decode_staged: return "decode_staged";
    case op::repair: return "repair";
    case op::encode_fused: return "encode_fused";
    case op::encode_compact: return "encode_compact";
  }
  return "?";
}
inline const char* name(error_policy p) {
  return p == error_policy::strict ? "strict" : p == error_policy::replace ? "replace" : "drop";
}
inline bool is_encode(op o) { return o == op::encode_fused || o == op::encode_compact; }

inline constexpr op utf8_ops[] = {op::validate, op::decode_fused, op::decode_staged, op::repair};
inline bool is_decode(op o) {
  return o == op::decode_fused || o == op::decode_staged;
}
inline constexpr op encode_ops[] = {op::encode_fused, op::encode_compact};
inline constexpr error_policy policies[] = {error_policy::strict, error_policy::replace,
                                            error_policy::drop};

// Output bytes an op may write for n input bytes.
inline std::size_t max_out(op o, std::size_t n) {
  switch (o) {
    case op::validate: return 0;
    case op::decode_fused:
    case op::decode_staged: return 4 * n;
    case op::repair: return 3 * n;
    default: return n + 3;
  }
}
inline std::size_t out_unit(op o) { return is_decode(o) ? 4 : 1; }

struct result {
  bytes out;
  summary sum;
  std::uint64_t written = 0;  // output units
};

inline device::decoder variant_of(op o) {
  return o == op::decode_staged ? device::decoder::staged : device::decoder::fused;
}

// Device buffers reused across calls (grown on demand).
class workspace {
 public:
  // op::validate through another shape of its screening walk (aligned input only), when set.
  std::optional<device::detail::screen_shape> screen;

  // One device call. `misalign` shifts the input inside its buffer (0..15). The bytes around the
  // input would change any result they took part in (a 4-byte lead before it, a continuation
  // after it), so a read outside the input fails by design.
  device::device_summary call(op o, std::span<const std::uint8_t> in, error_policy p, bool is_last,
                              std::size_t misalign = 0) {
    grow(in_, in.size() + 32);
    grow(out_, max_out(o, in.size()) + 16);
    cuda::check(cudaMemset(in_.data(), 0xF1, misalign), "guard before");
    cuda::check(cudaMemset(in_.data() + misalign + in.size(), 0x80, 16), "guard after");
    if (!in.empty())
      cuda::check(cudaMemcpy(in_.data() + misalign, in.data(), in.size(), cudaMemcpyHostToDevice),
                  "upload");
    const auto* d_in = reinterpret_cast<const std::byte*>(in_.data() + misalign);
    std::size_t temp = 0;
    cuda::check(dispatch(o, nullptr, temp, d_in, in.size(), p, is_last), "size query");
    grow(temp_, std::max<std::size_t>(temp, 1));
    cuda::check(dispatch(o, temp_.data(), temp, d_in, in.size(), p, is_last), name(o));
    cuda::check(cudaDeviceSynchronize(), "kernel execution");
    device::device_summary s;
    cuda::check(cudaMemcpy(&s, summary_.data(), sizeof s, cudaMemcpyDeviceToHost), "summary");
    return s;
  }
  // Output bytes [0, count) of the last call.
  bytes output(std::size_t count) const {
    bytes b(count);
    if (count)
      cuda::check(cudaMemcpy(b.data(), out_.data(), count, cudaMemcpyDeviceToHost), "download");
    return b;
  }

  result run(op o, std::span<const std::uint8_t> in, error_policy p, std::size_t misalign = 0) {
    const device::device_summary s = call(o, in, p, true, misalign);
    result r;
    r.written = s.written;
    r.sum = device::to_summary(s, is_encode(o) ? 4 : 1);
    r.out = output(s.written * out_unit(o));
    EXPECT_EQ(s.carry, 0u);
    return r;
  }

  // Chunked: split at `cuts` (sorted offsets), carry prepended, outputs concatenated; every chunk
  // `misalign` bytes into its buffer.
  result run_chunked(op o, std::span<const std::uint8_t> in, error_policy p,
                     const std::vector<std::size_t>& cuts, std::size_t misalign = 0) {
    result r;
    device::chunk_tracker tracker(is_encode(o) ? 4 : 1);
    bytes chunk;
    std::size_t begin = 0;
    for (std::size_t c = 0; c <= cuts.size(); ++c) {
      const std::size_t end = c < cuts.size() ? cuts[c] : in.size();
      const bool last = c == cuts.size();
      chunk.insert(chunk.end(), in.begin() + static_cast<std::ptrdiff_t>(begin),
                   in.begin() + static_cast<std::ptrdiff_t>(end));
      begin = end;
      const device::device_summary s = call(o, chunk, p, last, misalign);
      EXPECT_EQ(s.consumed + s.carry == chunk.size() || (p == error_policy::strict && s.errors), true);
      const bytes out = output(s.written * out_unit(o));
      r.out.insert(r.out.end(), out.begin(), out.end());
      tracker.add(s);
      if (p == error_policy::strict && s.errors != 0 && o != op::validate) break;
      bytes carry(chunk.end() - static_cast<std::ptrdiff_t>(s.carry), chunk.end());
      chunk.swap(carry);
    }
    r.sum = tracker.result();
    r.written = tracker.written();
    return r;
  }

 private:
  template <class T>
  static void grow(cuda::device_buffer<T>& b, std::size_t n) {
    if (b.size() < n) b = cuda::device_buffer<T>(std::max(n, b.size() * 2));
  }
  cudaError_t dispatch(op o, void* temp, std::size_t& temp_bytes, const std::byte* in,
                       std::size_t n, error_policy p, bool is_last) {
    if (summary_.size() == 0) summary_ = cuda::device_buffer<device::device_summary>(1);
    device::device_summary* s = summary_.data();
    switch (o) {
      case op::validate:
        if (screen) return device::detail::validate_screen(*screen, temp, temp_bytes, in, n, s, is_last);
        return device::validate(temp, temp_bytes, in, n, s, is_last);
      case op::decode_fused:
        case op::decode_staged:
        return device::decode(temp, temp_bytes, in, n, reinterpret_cast<char32_t*>(out_.data()), s,
                              p, is_last, variant_of(o));
      case op::repair:
        return device::repair(temp, temp_bytes, in, n, reinterpret_cast<char8_t*>(out_.data()), s,
                                p, is_last);
      case op::encode_fused:
      case op::encode_compact:
        return device::encode(temp, temp_bytes, in, n, reinterpret_cast<char8_t*>(out_.data()), s,
                              p, is_last,
                              o == op::encode_fused ? device::encoder::fused : device::encoder::compact);
    }
    return cudaErrorInvalidValue;
  }

  cuda::device_buffer<std::uint8_t> in_, out_, temp_;
  cuda::device_buffer<device::device_summary> summary_;
};

// The CPU codec (the oracle) on the same input.
inline result cpu(op o, std::span<const std::uint8_t> in, error_policy p) {
  options opt;
  opt.backend = backend::cpu;
  const auto src = std::as_bytes(in);
  result r;
  switch (o) {
    case op::validate:
      r.sum = gutf8::validate(src, opt);
      return r;
    case op::decode_fused:
    case op::decode_staged: {
      std::vector<char32_t> out(max_decoded_size(in.size()));
      const transcode_result t = gutf8::decode(src, out, p, opt);
      r.sum = t.input;
      r.written = t.written;
      r.out.resize(4 * t.written);
      if (t.written) std::memcpy(r.out.data(), out.data(), 4 * t.written);
      return r;
    }
    case op::repair: {
      std::vector<char8_t> out(max_repaired_size(in.size()));
      const transcode_result t = gutf8::repair(src, out, p, opt);
      r.sum = t.input;
      r.written = t.written;
      r.out.assign(reinterpret_cast<const std::uint8_t*>(out.data()),
                   reinterpret_cast<const std::uint8_t*>(out.data()) + t.written);
      return r;
    }
    default: {
      std::vector<char8_t> out(max_encoded_size(in.size()));
      const transcode_result t = gutf8::encode(src, out, p, opt);
      r.sum = t.input;
      r.written = t.written;
      r.out.assign(reinterpret_cast<const std::uint8_t*>(out.data()),
                   reinterpret_cast<const std::uint8_t*>(out.data()) + t.written);
      return r;
    }
  }
}

inline std::string describe(const summary& s) {
  std::string r = "bytes=" + std::to_string(s.bytes) + " errors=" + std::to_string(s.errors);
  if (s.first_error) {
    r += " first@" + std::to_string(s.first_error->offset) + " line " +
         std::to_string(s.first_error->line) + " col " + std::to_string(s.first_error->column) +
         " kind " + std::to_string(static_cast<int>(s.first_error->kind));
  }
  return r;
}

// Byte-for-byte comparison; returns true when equal (failures are recorded).
inline bool same(const result& gpu, const result& ref, const std::string& what) {
  bool ok = true;
  if (gpu.written != ref.written) {
    ADD_FAILURE() << what << ": written " << gpu.written << " vs CPU " << ref.written;
    ok = false;
  }
  if (!(gpu.sum == ref.sum)) {
    ADD_FAILURE() << what << ": summary " << describe(gpu.sum) << " vs CPU " << describe(ref.sum);
    ok = false;
  }
  const std::size_t n = std::min(gpu.out.size(), ref.out.size());
  const auto mis = std::mismatch(gpu.out.begin(), gpu.out.begin() + static_cast<std::ptrdiff_t>(n),
                                 ref.out.begin());
  if (mis.first != gpu.out.begin() + static_cast<std::ptrdiff_t>(n) || gpu.out.size() != ref.out.size()) {
    ADD_FAILURE() << what << ": output differs at byte " << (mis.first - gpu.out.begin()) << " (sizes "
                  << gpu.out.size() << " vs " << ref.out.size() << ")";
    ok = false;
  }
  return ok;
}

// Runs `o` under `p` on the GPU and the CPU and compares.
inline bool check(workspace& ws, op o, std::span<const std::uint8_t> in, error_policy p,
                  const std::string& what, std::size_t misalign = 0) {
  const result g = ws.run(o, in, p, misalign);
  const result c = cpu(o, in, p);
  return same(g, c, what + " [" + name(o) + "/" + name(p) + " n=" + std::to_string(in.size()) +
                        " misalign=" + std::to_string(misalign) + "]");
}

// Every UTF-8 op and policy (validate once).
inline bool check_all_utf8(workspace& ws, std::span<const std::uint8_t> in, const std::string& what,
                           std::size_t misalign = 0) {
  bool ok = check(ws, op::validate, in, error_policy::replace, what, misalign);
  for (op o : utf8_ops)
    if (o != op::validate)
      for (error_policy p : policies) ok = check(ws, o, in, p, what, misalign) && ok;
  return ok;
}
inline bool check_all_encode(workspace& ws, std::span<const std::uint8_t> in, const std::string& what,
                             std::size_t misalign = 0) {
  bool ok = true;
  for (op o : encode_ops)
    for (error_policy p : policies) ok = check(ws, o, in, p, what, misalign) && ok;
  return ok;
}

// ------------------------------------------------------------------ generators ----

enum class script { ascii, latin, cyrillic, cjk, emoji, mixed };
inline constexpr script scripts[] = {script::ascii, script::latin, script::cyrillic,
                                     script::cjk, script::emoji, script::mixed};

inline char32_t random_code_point(std::mt19937_64& g, script s) {
  auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return static_cast<char32_t>(lo + g() % (hi - lo + 1));
  };
  if (g() % 16 == 0) return U'\n';
  switch (s) {
    case script::ascii: return pick(0x20, 0x7E);
    case script::latin: return g() % 2 ? pick(0x20, 0x7E) : pick(0xA0, 0x24F);
    case script::cyrillic: return g() % 4 == 0 ? U' ' : pick(0x400, 0x4FF);
    case script::cjk: return g() % 8 == 0 ? pick(0x3000, 0x303F) : pick(0x4E00, 0x9FFF);
    case script::emoji: return g() % 8 == 0 ? U' ' : pick(0x1F300, 0x1FAFF);
    case script::mixed:
    default: {
      switch (g() % 6) {
        case 0: return pick(0x00, 0x7F);
        case 1: return pick(0x80, 0x7FF);
        case 2: return pick(0x800, 0xD7FF);
        case 3: return pick(0xE000, 0xFFFF);
        case 4: return pick(0x10000, 0x10FFFF);
        default: return pick(0x20, 0x7E);
      }
    }
  }
}

inline void append_utf8(bytes& out, char32_t c) {
  std::uint8_t b[4];
  const unsigned n = detail::encode_scalar(c, b);
  out.insert(out.end(), b, b + n);
}

// About n bytes of valid UTF-8 text.
inline bytes random_text(std::mt19937_64& g, std::size_t n, script s) {
  bytes out;
  out.reserve(n + 4);
  while (out.size() < n) append_utf8(out, random_code_point(g, s));
  return out;
}

// Corrupts about rate * size bytes: overwrite with a random or interesting byte, delete a byte,
// or insert one (so truncations and stray bytes of every kind appear).
inline void corrupt(std::mt19937_64& g, bytes& b, double rate) {
  static constexpr std::uint8_t interesting[] = {0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1,
                                                 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5,
                                                 0xFF, 0x0A};
  std::bernoulli_distribution hit(rate);
  bytes out;
  out.reserve(b.size() + b.size() / 8);
  for (std::uint8_t x : b) {
    if (!hit(g)) {
      out.push_back(x);
      continue;
    }
    switch (g() % 4) {
      case 0: out.push_back(static_cast<std::uint8_t>(g())); break;
      case 1: out.push_back(interesting[g() % sizeof interesting]); break;
      case 2: break;  // delete
      default:
        out.push_back(interesting[g() % sizeof interesting]);
        out.push_back(x);
    }
  }
  b.swap(out);
}

// UTF-32LE bytes of a code point sequence, with about rate * count invalid values (surrogates,
// values above U+10FFFF) and, when ragged != 0, that many trailing bytes.
inline bytes random_utf32(std::mt19937_64& g, std::size_t count, script s, double rate,
                          std::size_t ragged = 0) {
  std::bernoulli_distribution hit(rate);
  bytes out;
  out.reserve(4 * count + 3);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t v = static_cast<std::uint32_t>(random_code_point(g, s));
    if (hit(g)) {
      switch (g() % 3) {
        case 0: v = 0xD800u + static_cast<std::uint32_t>(g() % 0x800); break;
        case 1: v = 0x110000u + static_cast<std::uint32_t>(g() % 0x1000); break;
        default: v = static_cast<std::uint32_t>(g()) | 0x80000000u;
      }
    }
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  for (std::size_t k = 0; k < ragged; ++k) out.push_back(static_cast<std::uint8_t>(g()));
  return out;
}

}  // namespace gutf8::test::gpu
