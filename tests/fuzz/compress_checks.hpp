// The property the gutf8_fuzz_decompress target checks (src/compress on arbitrary bytes), shared
// with tests/cpu/regression_test.cpp. Byte 0 of the input: bits 0-2 the format (mod 5), bits 3-5
// the chunk size the decompressor is fed in, bits 6-7 the parts' target size; the rest is the
// compressed input. Properties:
// - only gutf8::error(io_failure) is thrown, naming the format and a position inside the input;
// - fed in chunks or held in memory, the input gives the same text, or both fail;
// - the splitter's parts tile the file (members) and, where every part decompresses, their texts
//   joined are the text of the whole input decompressed in order (which then succeeds);
// - the input's bytes as text, compressed by the compressor and as two parts, decompress to them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "compress/compressor.hpp"
#include "compress/decompressor.hpp"
#include "compress/parts.hpp"
#include "gutf8/error.hpp"

namespace gutf8::fuzz {

namespace cz = gutf8::internal::compress;

// Text beyond this is not compared (a few bytes of zstd can ask for 128 MiB of RLE blocks).
inline constexpr std::size_t decompressed_cap = std::size_t{8} << 20;

// The text, or the error's message; anything but io_failure is a finding (`wrong`).
struct decoded {
  std::optional<std::string> text;
  std::string error;
};

inline decoded drain_capped(cz::decompressor& d, std::string& wrong) {
  decoded r;
  std::string t;
  std::vector<std::uint8_t> out(4093);
  try {
    for (std::size_t n; t.size() < decompressed_cap && (n = d.read(out)) > 0;)
      t.append(reinterpret_cast<const char*>(out.data()), n);
    r.text = std::move(t);
  } catch (const gutf8::error& e) {
    r.error = e.what();
    if (e.code() != gutf8::errc::io_failure) wrong += "not an io_failure: " + r.error + "\n";
  }
  return r;
}

inline void check_message(cz::format f, const decoded& d, std::size_t size, std::string& wrong) {
  if (d.text || d.error.find("needs more than") != std::string::npos) return;
  // After skippable frames, a zstd input may turn out lz4 and the other way round.
  const bool either = f == cz::format::zstd || f == cz::format::lz4;
  bool named = false;
  for (const cz::format g : {f, either ? cz::format::zstd : f, either ? cz::format::lz4 : f}) {
    const std::string name(cz::name(g));
    named = named || d.error.starts_with("corrupt " + name + " data at compressed byte ") ||
            d.error.starts_with("truncated " + name + " stream: input ends at compressed byte ");
  }
  const std::size_t at = d.error.find("byte ");
  if (!named || at == std::string::npos || std::stoull(d.error.substr(at + 5)) > size)
    wrong += "message: " + d.error + "\n";
}

// Every part decoded in order; none where one fails.
inline std::optional<std::string> by_parts(cz::format f, std::span<const std::uint8_t> in, std::uint64_t target,
                                           std::string& wrong) {
  const cz::random_reader read = [in](std::span<std::uint8_t> b, std::uint64_t at) {
    if (at > in.size() || b.size() > in.size() - at) throw gutf8::error(gutf8::errc::io_failure, "read past the end");
    std::copy_n(in.data() + at, b.size(), b.data());
  };
  std::string all;
  std::uint64_t end = 0;
  for (const cz::part& p : cz::split(f, read, in.size(), target)) {
    if (p.holds == cz::layout::members && p.offset != end) wrong += "parts do not tile the file\n";
    end = p.offset + p.size;
    cz::decompressor d;
    d.open(f, p, in.subspan(p.offset, p.size));
    const decoded r = drain_capped(d, wrong);
    if (!r.text) return std::nullopt;
    all += *r.text;
  }
  return all.substr(0, decompressed_cap);
}

inline void check_round_trip(cz::format f, std::span<const std::uint8_t> text, std::string& wrong) {
  std::vector<std::uint8_t> c;
  cz::compressor s(
      f, [&](std::span<const std::uint8_t> b) { c.insert(c.end(), b.begin(), b.end()); }, 1);
  s.write(text);
  s.finish();
  cz::part_compressor pc(f, 1);
  const std::size_t half = text.size() / 2;
  pc.append(text.first(half), c);
  pc.append(text.subspan(half), c);
  cz::decompressor d;
  cz::part whole;
  whole.size = c.size();
  d.open(f, whole, c);
  const decoded r = drain_capped(d, wrong);
  const std::string want(text.begin(), text.end());
  if (r.text != want + want) wrong += "round trip: " + (r.text ? "other text" : r.error) + "\n";
}

inline std::string check_decompress(std::span<const std::uint8_t> data) {
  if (data.empty()) return "";
  static constexpr std::size_t chunks[] = {1, 2, 3, 7, 64, 509, 4093, 65537};
  static constexpr std::uint64_t targets[] = {1, 100, 4096, std::uint64_t{1} << 40};
  const auto f = static_cast<cz::format>(1 + data[0] % 5);
  const std::size_t chunk = chunks[(data[0] >> 3) & 7];
  const std::span<const std::uint8_t> in = data.subspan(1);
  std::string wrong;

  cz::decompressor streamed;
  streamed.open(f, [in, chunk, at = std::size_t{0}](std::span<std::uint8_t> b) mutable {
    const std::size_t n = std::min({chunk, b.size(), in.size() - at});
    std::copy_n(in.data() + at, n, b.data());
    at += n;
    return n;
  });
  const decoded a = drain_capped(streamed, wrong);
  cz::decompressor held;
  cz::part whole;
  whole.size = in.size();
  held.open(f, whole, in);
  const decoded b = drain_capped(held, wrong);
  if (a.text != b.text) wrong += "chunked and in memory differ: " + a.error + " / " + b.error + "\n";
  check_message(f, a, in.size(), wrong);
  check_message(f, b, in.size(), wrong);

  const std::optional<std::string> parts = by_parts(f, in, targets[data[0] >> 6], wrong);
  if (parts && (!b.text || *parts != *b.text)) wrong += "parts decode what the whole input does not\n";
  check_round_trip(f, in.first(std::min<std::size_t>(in.size(), 2048)), wrong);
  return wrong.empty() ? "" : std::string(cz::name(f)) + ": " + wrong;
}

}  // namespace gutf8::fuzz
