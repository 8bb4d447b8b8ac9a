// Constants shared by the AVX2 and AVX-512 scanners, built at compile time from the rules
// they encode. A vector of bytes that starts at a unit boundary is well-formed exactly when:
//  1. a byte is a continuation byte where, and only where, a lead 1, 2 or 3 bytes before
//     it expects one (the bytes before the vector: the vector before it, or ASCII when the
//     vector starts a unit);
//  2. no pair (lead, next byte) breaks a second-byte rule of Table 3-7 (pair classes);
//  3. (at the vector's end) a cut sequence is left to the next vector, which starts at its lead.
// Decoding reads each sequence's lead nibble to learn n, the continuation bytes it
// announces, and takes the payload from 4 gathered bytes (decode tables).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace gutf8::cpu::simd {

// One way a pair (lead, next byte) breaks Table 3-7 when the next byte is a continuation
// byte (rule 1 covers the others). A pair is wrong when the classes of the lead's high
// nibble, the lead's low nibble and the next byte's high nibble share a bit.
enum pair_class : std::uint8_t {
  e0_overlong = 1,   // E0 80..9F
  ed_surrogate = 2,  // ED A0..BF
  f0_overlong = 4,   // F0 80..8F
  f4_too_large = 8,  // F4 90..BF
  c0_c1 = 16,        // C0, C1 + any continuation byte
  f5_ff = 32,        // F5..FF + any continuation byte
};

using nibble_map = std::array<std::uint8_t, 16>;

constexpr nibble_map lead_high_classes() {
  nibble_map t{};
  t[0xC] = c0_c1;
  t[0xE] = e0_overlong | ed_surrogate;
  t[0xF] = f0_overlong | f4_too_large | f5_ff;
  return t;
}
constexpr nibble_map lead_low_classes() {
  nibble_map t{};
  t[0x0] = e0_overlong | f0_overlong | c0_c1;
  t[0x1] = c0_c1;
  t[0x4] = f4_too_large;
  t[0xD] = ed_surrogate;
  for (std::size_t i = 5; i < 16; ++i) t[i] |= f5_ff;
  return t;
}
constexpr nibble_map next_high_classes() {
  nibble_map t{};
  t[0x8] = e0_overlong | f0_overlong | c0_c1 | f5_ff;
  t[0x9] = e0_overlong | f4_too_large | c0_c1 | f5_ff;
  t[0xA] = ed_surrogate | f4_too_large | c0_c1 | f5_ff;
  t[0xB] = ed_surrogate | f4_too_large | c0_c1 | f5_ff;
  return t;
}

// Decode tables by lead high nibble (0..7 ASCII: n = 0; C, D: 1; E: 2; F: 3). `payload`
// is 0x7F >> n, which keeps exactly a lead's payload because the bit under its length
// prefix is 0; `up` = 6n places it; `down` = 18 - 6n drops the bytes a 4-byte reading of
// a shorter sequence took from its neighbours.
constexpr nibble_map decode_payload{0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F,
                                    0,    0,    0,    0,    0x3F, 0x3F, 0x1F, 0x0F};
constexpr nibble_map decode_up{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 12, 18};
constexpr nibble_map decode_down{18, 18, 18, 18, 18, 18, 18, 18, 0, 0, 0, 0, 12, 12, 6, 0};

template <std::size_t N>
using vec = std::array<std::uint8_t, N>;

template <std::size_t N>
constexpr vec<N> splat8(std::uint8_t b) {
  vec<N> v{};
  for (auto& x : v) x = b;
  return v;
}
template <std::size_t N>
constexpr vec<N> splat32(std::uint32_t d) {
  vec<N> v{};
  for (std::size_t i = 0; i < N; ++i) v[i] = std::uint8_t(d >> (8 * (i % 4)));
  return v;
}
template <std::size_t N>  // the same 16-entry table in every 128-bit part (pshufb)
constexpr vec<N> per_128_bits(const nibble_map& t) {
  vec<N> v{};
  for (std::size_t i = 0; i < N; ++i) v[i] = t[i % 16];
  return v;
}

// Every table a scanner of N-byte registers needs.
template <std::size_t N>
struct constants {
  alignas(N) vec<N> low_nibble = splat8<N>(0x0F);
  alignas(N) vec<N> continuation_top = splat8<N>(0xC0);  // signed: 80..BF are below it
  alignas(N) vec<N> over_bf = splat8<N>(0xBF);
  alignas(N) vec<N> over_df = splat8<N>(0xDF);
  alignas(N) vec<N> over_ef = splat8<N>(0xEF);
  alignas(N) vec<N> lead_high = per_128_bits<N>(lead_high_classes());
  alignas(N) vec<N> lead_low = per_128_bits<N>(lead_low_classes());
  alignas(N) vec<N> next_high = per_128_bits<N>(next_high_classes());
  alignas(N) vec<N> lead_nibble = splat32<N>(0x0000000Fu);
  alignas(N) vec<N> zero_rest = splat32<N>(0x80808000u);  // pshufb yields 0 for these bytes
  alignas(N) vec<N> payload = per_128_bits<N>(decode_payload);
  alignas(N) vec<N> up = per_128_bits<N>(decode_up);
  alignas(N) vec<N> down = per_128_bits<N>(decode_down);
  alignas(N) vec<N> trail_bits = splat32<N>(0x3F3F3F00u);
  alignas(N) vec<N> pair_weights = splat32<N>(0x01400100u);  // bytes (0, 1), (64, 1)
  alignas(N) vec<N> quad_weights = splat32<N>(0x00011000u);  // words 4096, 1
};

}  // namespace gutf8::cpu::simd
