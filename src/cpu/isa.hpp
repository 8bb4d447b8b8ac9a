// Which vector instructions the CPU scanners may use. Detected once; tests ask for a lower level
// (cpu_tuning), and GUTF8_CPU_ISA=portable or avx2 in the environment lowers it for a whole
// process (benchmarks, the CLI), as simdutf's SIMDUTF_FORCE_IMPLEMENTATION does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

// GUTF8_NO_SIMD (a compile definition) builds only the plain C++ paths, as on a CPU
// without SSE2: a way to test them.
#if defined(__SSE2__) && !defined(GUTF8_NO_SIMD)
#define GUTF8_SSE2 1
#else
#define GUTF8_SSE2 0
#endif

// For the small helpers of a scanning loop, which every ISA's loop must inline: a call there
// passes registers through memory, and GCC's inlining heuristics vary between instantiations.
#if defined(__GNUC__)
#define GUTF8_ALWAYS_INLINE __attribute__((always_inline))
#else
#define GUTF8_ALWAYS_INLINE
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(GUTF8_NO_SIMD)
// GCC 12.2 warns inside its own AVX-512 intrinsics (PR 105593, fixed in 12.3); the
// diagnostic state is kept by location, so this covers their uses too.
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define GUTF8_X86 1
#define GUTF8_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))
#define GUTF8_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,avx2,bmi,bmi2,popcnt")))
#else
#define GUTF8_X86 0
#endif

namespace gutf8::cpu {

enum class isa : std::uint8_t {
  portable,  // SSE2 on x86-64, plain C++ elsewhere
  avx2,      // AVX2 + BMI2
  avx512,    // AVX-512 F/BW/VL + VBMI, VBMI2 (Ice Lake, Sapphire Rapids, Zen 4 and later)
};

// The level GUTF8_CPU_ISA asks for, never above what the CPU has.
inline isa lowered_by_environment(isa detected) noexcept {
  const char* asked = std::getenv("GUTF8_CPU_ISA");
  if (asked == nullptr) return detected;
  const std::string_view name = asked;
  return std::min(detected, name == "portable" ? isa::portable : name == "avx2" ? isa::avx2 : detected);
}

inline isa best_isa() noexcept {
#if GUTF8_X86
  static const isa level = [] {
    const bool avx2 =
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
                        __builtin_cpu_supports("avx512vbmi2");
    return lowered_by_environment(avx512 ? isa::avx512 : avx2 ? isa::avx2 : isa::portable);
  }();
  return level;
#else
  return isa::portable;
#endif
}

}  // namespace gutf8::cpu
