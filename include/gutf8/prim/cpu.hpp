// gutf8 primitives on the CPU: scan, select/compact and LSD radix sort, sequential
// (threads == 1) or multithreaded with std::thread (threads > 1; 0 = all hardware threads).
// Same semantics as the GPU versions in gutf8/prim/{scan,select,radix_sort}.cuh:
//  * scans take any associative operator (combined strictly in element order), exclusive_scan
//    puts init in front; out may equal in;
//  * select is stable and returns the number of selected items;
//  * radix sort is stable, ascending on bits [begin_bit, end_bit) of uint32_t / uint64_t keys.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

namespace gutf8::prim::cpu {

// Hardware threads (at least 1).
unsigned hardware_threads() noexcept;

// Runs body(0..parts-1), part 0 on the calling thread, the rest on std::threads; joins all.
// Exceptions from any part are rethrown (the first one) after every thread has joined.
void parallel_parts(unsigned parts, const std::function<void(unsigned)>& body);

namespace detail {
inline unsigned resolve_threads(unsigned threads, std::size_t n, std::size_t min_per_thread = 1u << 16) {
  if (threads == 0) threads = hardware_threads();
  const std::size_t useful = std::max<std::size_t>(1, n / min_per_thread);
  return static_cast<unsigned>(std::min<std::size_t>(threads, useful));
}
inline std::size_t part_begin(std::size_t n, unsigned parts, unsigned p) {
  return n / parts * p + std::min<std::size_t>(p, n % parts);
}
}  // namespace detail

// ---------------- scan ----------------
template <class T, class Op>
void inclusive_scan(const T* in, T* out, std::size_t n, Op op, unsigned threads = 1) {
  if (n == 0) return;
  const unsigned parts = detail::resolve_threads(threads, n);
  if (parts <= 1) {
    T acc = in[0];
    out[0] = acc;
    for (std::size_t i = 1; i < n; ++i) out[i] = acc = op(acc, in[i]);
    return;
  }
  // reduce-then-scan: part totals, sequential scan of totals, scan of each part with its prefix
  std::vector<T> totals(parts, in[0]);
  parallel_parts(parts, [&](unsigned p) {
    const std::size_t b = detail::part_begin(n, parts, p), e = detail::part_begin(n, parts, p + 1);
    T acc = in[b];
    for (std::size_t i = b + 1; i < e; ++i) acc = op(acc, in[i]);
    totals[p] = acc;
  });
  for (unsigned p = 1; p < parts; ++p) totals[p] = op(totals[p - 1], totals[p]);
  parallel_parts(parts, [&](unsigned p) {
    const std::size_t b = detail::part_begin(n, parts, p), e = detail::part_begin(n, parts, p + 1);
    T acc = p == 0 ? in[b] : op(totals[p - 1], in[b]);
    out[b] = acc;
    for (std::size_t i = b + 1; i < e; ++i) out[i] = acc = op(acc, in[i]);
  });
}

template <class T, class Op>
void exclusive_scan(const T* in, T* out, std::size_t n, T init, Op op, unsigned threads = 1) {
  if (n == 0) return;
  const unsigned parts = detail::resolve_threads(threads, n);
  if (parts <= 1) {
    T acc = init;
    for (std::size_t i = 0; i < n; ++i) {
      const T x = in[i];
      out[i] = acc;
      acc = op(acc, x);
    }
    return;
  }
  std::vector<T> totals(parts, init);
  parallel_parts(parts, [&](unsigned p) {
    const std::size_t b = detail::part_begin(n, parts, p), e = detail::part_begin(n, parts, p + 1);
    T acc = in[b];
    for (std::size_t i = b + 1; i < e; ++i) acc = op(acc, in[i]);
    totals[p] = acc;
  });
  std::vector<T> prefix(parts, init);
  for (unsigned p = 1; p < parts; ++p) prefix[p] = op(prefix[p - 1], totals[p - 1]);
  parallel_parts(parts, [&](unsigned p) {
    const std::size_t b = detail::part_begin(n, parts, p), e = detail::part_begin(n, parts, p + 1);
    T acc = prefix[p];
    for (std::size_t i = b; i < e; ++i) {
      const T x = in[i];
      out[i] = acc;
      acc = op(acc, x);
    }
  });
}

// ---------------- select ----------------
namespace detail {
template <class T, class Sel>
std::size_t select_impl(const T* in, T* out, std::size_t n, Sel sel, unsigned threads) {
  const unsigned parts = resolve_threads(threads, n);
  if (parts <= 1) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (sel(i)) out[k++] = in[i];
    return k;
  }
  std::vector<std::size_t> counts(parts + 1, 0);
  parallel_parts(parts, [&](unsigned p) {
    const std::size_t b = part_begin(n, parts, p), e = part_begin(n, parts, p + 1);
    std::size_t c = 0;
    for (std::size_t i = b; i < e; ++i) c += sel(i) ? 1 : 0;
    counts[p + 1] = c;
  });
  for (unsigned p = 0; p < parts; ++p) counts[p + 1] += counts[p];
  parallel_parts(parts, [&](unsigned p) {
    const std::size_t b = part_begin(n, parts, p), e = part_begin(n, parts, p + 1);
    std::size_t k = counts[p];
    for (std::size_t i = b; i < e; ++i)
      if (sel(i)) out[k++] = in[i];
  });
  return counts[parts];
}
}  // namespace detail

template <class T, class FlagT>
std::size_t select_flagged(const T* in, const FlagT* flags, T* out, std::size_t n, unsigned threads = 1) {
  return detail::select_impl(in, out, n, [flags](std::size_t i) { return flags[i] != FlagT(0); }, threads);
}

template <class T, class Pred>
std::size_t select_if(const T* in, T* out, std::size_t n, Pred pred, unsigned threads = 1) {
  return detail::select_impl(in, out, n, [in, &pred](std::size_t i) { return static_cast<bool>(pred(in[i])); },
                             threads);
}

// ---------------- radix sort ----------------
// LSD, 8-bit digits; a digit on which all keys agree is skipped. Keys: uint32_t / uint64_t.
// Multithreaded: per-thread digit histograms, offsets in (digit, thread) order, stable scatter.
namespace detail {
struct no_vals {};

template <class K, class V, bool HasValues>
void radix_sort_impl(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, std::size_t n,
                     int begin_bit, int end_bit, unsigned threads) {
  static_assert(std::is_same_v<K, std::uint32_t> || std::is_same_v<K, std::uint64_t>);
  if (n == 0) return;
  if (keys_out != keys_in) std::memmove(keys_out, keys_in, n * sizeof(K));
  if constexpr (HasValues)
    if (vals_out != vals_in) std::memmove(vals_out, vals_in, n * sizeof(V));
  if (begin_bit >= end_bit) return;
  const unsigned parts = resolve_threads(threads, n);
  std::vector<K> kalt(n);
  std::vector<V> valt(HasValues ? n : 0);
  K* ks = keys_out;
  K* kd = kalt.data();
  V* vs = vals_out;
  V* vd = valt.data();
  constexpr int bins = 256;
  std::vector<std::size_t> hist(static_cast<std::size_t>(parts) * bins);
  for (int shift = begin_bit; shift < end_bit; shift += 8) {
    const int bits = std::min(8, end_bit - shift);
    const K mask = (K(1) << bits) - 1;
    std::fill(hist.begin(), hist.end(), 0);
    parallel_parts(parts, [&](unsigned p) {
      const std::size_t b = part_begin(n, parts, p), e = part_begin(n, parts, p + 1);
      std::size_t* h = hist.data() + static_cast<std::size_t>(p) * bins;
      for (std::size_t i = b; i < e; ++i) ++h[(ks[i] >> shift) & mask];
    });
    // skip a digit all keys share
    bool trivial = false;
    for (int d = 0; d < bins && !trivial; ++d) {
      std::size_t c = 0;
      for (unsigned p = 0; p < parts; ++p) c += hist[static_cast<std::size_t>(p) * bins + d];
      trivial = c == n;
    }
    if (trivial) continue;
    std::size_t run = 0;  // offsets in (digit, part) order
    for (int d = 0; d < bins; ++d)
      for (unsigned p = 0; p < parts; ++p) {
        std::size_t& h = hist[static_cast<std::size_t>(p) * bins + d];
        const std::size_t c = h;
        h = run;
        run += c;
      }
    parallel_parts(parts, [&](unsigned p) {
      const std::size_t b = part_begin(n, parts, p), e = part_begin(n, parts, p + 1);
      std::size_t* h = hist.data() + static_cast<std::size_t>(p) * bins;
      for (std::size_t i = b; i < e; ++i) {
        const std::size_t o = h[(ks[i] >> shift) & mask]++;
        kd[o] = ks[i];
        if constexpr (HasValues) vd[o] = vs[i];
      }
    });
    std::swap(ks, kd);
    if constexpr (HasValues) std::swap(vs, vd);
  }
  if (ks != keys_out) {
    std::memcpy(keys_out, ks, n * sizeof(K));
    if constexpr (HasValues) std::memcpy(vals_out, vs, n * sizeof(V));
  }
}
}  // namespace detail

template <class K>
void radix_sort_keys(const K* keys_in, K* keys_out, std::size_t n, int begin_bit = 0,
                     int end_bit = static_cast<int>(8 * sizeof(K)), unsigned threads = 1) {
  detail::radix_sort_impl<K, detail::no_vals, false>(keys_in, keys_out, nullptr, nullptr, n, begin_bit, end_bit,
                                                     threads);
}

template <class K, class V>
void radix_sort_pairs(const K* keys_in, K* keys_out, const V* vals_in, V* vals_out, std::size_t n,
                      int begin_bit = 0, int end_bit = static_cast<int>(8 * sizeof(K)), unsigned threads = 1) {
  detail::radix_sort_impl<K, V, true>(keys_in, keys_out, vals_in, vals_out, n, begin_bit, end_bit, threads);
}

// Non-template entry points compiled into libgutf8_prim (the common instantiations).
void radix_sort_keys_u32(const std::uint32_t* in, std::uint32_t* out, std::size_t n, int begin_bit,
                         int end_bit, unsigned threads);
void radix_sort_keys_u64(const std::uint64_t* in, std::uint64_t* out, std::size_t n, int begin_bit,
                         int end_bit, unsigned threads);

}  // namespace gutf8::prim::cpu
