// Runs the UTF-8 kernels under the CPU emulation (cuda_emu.hpp) with the same launch sequences
// as src/cuda/device_*.cu and compares with the CPU codec. A development aid for machines
// without a GPU (slow: small inputs only); build by hand, e.g.
//   g++ -std=c++20 -O1 -pthread -Iinclude -Ikernels -Itests -Ibuild/include \
//       -I/usr/local/cuda/include -I/usr/local/cuda/include/cccl tests/gpu/emu/emu_test.cpp \
//       build/src/libgutf8.a build/src/libgutf8_prim.a -L/usr/local/cuda/lib64 -lcudart_static \
//       -lgtest -lgtest_main -ldl -lrt -o emu_test
#include "gpu/emu/cuda_emu.hpp"
// (kernels after the emulation header)
#include "utf8/decode_fused.cuh"
#include "utf8/decode_staged.cuh"
#include "utf8/encode.cuh"
#include "utf8/sanitize.cuh"
#include "utf8/summary.cuh"
#include "utf8/validate.cuh"
#include "gpu/gpu_harness.hpp"

namespace gutf8::test::gpu {
namespace {

using kern::u32;
using kern::u64;
using kern::u8;
using state_t = prim::detail::tile_state<u64>;

struct emu_state {
  std::vector<std::uint64_t> storage;
  state_t st;
  explicit emu_state(u64 tiles) {
    storage.assign(state_t::storage_bytes(tiles ? tiles : 1) / 8 + 64, 0);
    st = state_t::attach(storage.data(), tiles ? tiles : 1);
    std::memset(st.status, 0, (tiles ? tiles : 1) * sizeof(unsigned));
  }
};

u64 ceil_div(u64 a, u64 b) { return a / b + (a % b != 0); }
bool vec_flag = true;  // input 16-byte aligned

template <kern::input_kind K>
device::device_summary finish(kern::accum& acc, const u8* in, u64 n, bool strict) {
  emu::launch(dim3(static_cast<unsigned>(std::min<u64>(3, std::max<u64>(1, ceil_div(n, 4096))))),
              dim3(256), kern::lf_fixup_kernel<K>, in, n, &acc, vec_flag);
  device::device_summary s{};
  emu::launch(dim3(1), dim3(32), kern::finalize_kernel<K>, static_cast<const kern::accum*>(&acc), in,
              n, &s, strict);
  return s;
}

template <error_policy P>
device::device_summary run_utf8(op o, const u8* in, u64 n, u8* out, bool is_last) {
  kern::accum acc{};
  emu::launch(dim3(1), dim3(32), kern::prepare_kernel, &acc, in, n, is_last, kern::input_kind::utf8);
  if (o == op::validate) {
    const u64 tiles = ceil_div(n, kern::validate_tile);
    if (tiles)
      emu::launch(dim3(static_cast<unsigned>(std::min<u64>(tiles, 2))), dim3(256), kern::validate_kernel,
                  in, n, &acc, tiles, vec_flag);
    return finish<kern::input_kind::utf8>(acc, in, n, false);
  }
  const u64 tiles = ceil_div(n, 8192);
  emu_state es(tiles);
  const auto last = static_cast<u32>(tiles - 1);
  if (tiles) {
    if (o == op::decode_fused) {
      emu::launch(dim3(static_cast<unsigned>(tiles)), dim3(256), kern::decode_fused_kernel<P, 8>, in, n,
                  reinterpret_cast<u32*>(out), &acc, es.st, last, vec_flag);
    } else if (o == op::decode_staged) {
      emu::launch(dim3(static_cast<unsigned>(tiles)), dim3(256), kern::staged_scatter_kernel<P, 8>, in, n,
                  out, &acc, es.st, last, vec_flag);
      emu::launch(dim3(2), dim3(256), kern::staged_decode_kernel, reinterpret_cast<u32*>(out),
                  static_cast<const kern::accum*>(&acc));
    } else {
      emu::launch(dim3(static_cast<unsigned>(tiles)), dim3(256), kern::sanitize_kernel<P, 8>, in, n, out,
                  &acc, es.st, last, vec_flag);
    }
  }
  return finish<kern::input_kind::utf8>(acc, in, n, P == error_policy::strict);
}

template <error_policy P>
device::device_summary run_utf32(op o, const u8* in, u64 n, u8* out, bool is_last) {
  kern::accum acc{};
  emu::launch(dim3(1), dim3(32), kern::prepare_kernel, &acc, in, n, is_last, kern::input_kind::utf32);
  const u64 full = n / 4, elems = full + (is_last && n % 4 ? 1 : 0);
  const u64 tiles = ceil_div(elems, kern::encode_tile);
  emu_state es(tiles);
  const auto last = static_cast<u32>(tiles - 1);
  std::vector<uint4> padded(tiles * kern::encode_tile / 4 + 1);
  if (tiles) {
    if (o == op::encode_fused) {
      emu::launch(dim3(static_cast<unsigned>(tiles)), dim3(256), kern::encode_fused_kernel<P>, in, n, full,
                  elems, out, &acc, es.st, last, vec_flag);
    } else {
      emu::launch(dim3(static_cast<unsigned>(tiles)), dim3(256), kern::encode_expand_kernel<P>, in, n, full,
                  elems, padded.data(), &acc, vec_flag);
      emu::launch(dim3(static_cast<unsigned>(tiles)), dim3(256), kern::compact_bytes_kernel<P>,
                  static_cast<const uint4*>(padded.data()), out, &acc, es.st, last);
    }
  }
  return finish<kern::input_kind::utf32>(acc, in, n, P == error_policy::strict);
}

// One emulated device call; out receives written * unit bytes.
device::device_summary emu_call(op o, std::span<const std::uint8_t> input, error_policy p, bool is_last,
                                std::size_t misalign, bytes& out_bytes) {
  // 16-byte aligned buffers (plus `misalign`), zeroed slack (the kernels never read past n).
  std::vector<uint4> in_buf(input.size() / 16 + 3);
  if (!input.empty()) std::memcpy(reinterpret_cast<u8*>(in_buf.data()) + misalign, input.data(), input.size());
  std::vector<uint4> out_buf(max_out(o, input.size()) / 16 + 2);
  const auto* in = reinterpret_cast<const u8*>(in_buf.data()) + misalign;
  auto* out = reinterpret_cast<u8*>(out_buf.data());
  const u64 n = input.size();
  device::device_summary s{};
  const bool enc = is_encode(o);
  vec_flag = misalign == 0;
  switch (p) {
    case error_policy::strict:
      s = enc ? run_utf32<error_policy::strict>(o, in, n, out, is_last)
              : run_utf8<error_policy::strict>(o, in, n, out, is_last);
      break;
    case error_policy::replace:
      s = enc ? run_utf32<error_policy::replace>(o, in, n, out, is_last)
              : run_utf8<error_policy::replace>(o, in, n, out, is_last);
      break;
    case error_policy::drop:
      s = enc ? run_utf32<error_policy::drop>(o, in, n, out, is_last)
              : run_utf8<error_policy::drop>(o, in, n, out, is_last);
      break;
  }
  out_bytes.assign(out, out + s.written * out_unit(o));
  return s;
}

result run(op o, const bytes& input, error_policy p, std::size_t misalign = 0) {
  result r;
  const device::device_summary s = emu_call(o, input, p, true, misalign, r.out);
  r.written = s.written;
  r.sum = device::to_summary(s, is_encode(o) ? 4 : 1);
  return r;
}

result run_chunked(op o, const bytes& in, error_policy p, const std::vector<std::size_t>& cuts) {
  result r;
  device::chunk_tracker tracker(is_encode(o) ? 4 : 1);
  bytes chunk, out;
  std::size_t begin = 0;
  for (std::size_t c = 0; c <= cuts.size(); ++c) {
    const std::size_t end = c < cuts.size() ? cuts[c] : in.size();
    chunk.insert(chunk.end(), in.begin() + static_cast<std::ptrdiff_t>(begin),
                 in.begin() + static_cast<std::ptrdiff_t>(end));
    begin = end;
    const device::device_summary s = emu_call(o, chunk, p, c == cuts.size(), 0, out);
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

bool emu_check(op o, const bytes& in, error_policy p, const std::string& what) {
  return same(run(o, in, p), cpu(o, in, p),
              what + " [" + name(o) + "/" + name(p) + " n=" + std::to_string(in.size()) + "]");
}

TEST(Emu, Utf8KernelsMatchCpu) {
  std::uint64_t seed = 1;
  const std::size_t sizes[] = {0, 1, 3, 31, 32, 33, 200, 1000, 8191, 8192, 8193, 20000};
  for (std::size_t n : sizes) {
    for (script s : {script::ascii, script::cjk, script::emoji, script::mixed}) {
      for (double rate : {0.0, 0.003, 0.1}) {
        auto g = rng(seed++);
        bytes b = random_text(g, n, s);
        corrupt(g, b, rate);
        b.resize(n);
        for (op o : utf8_ops)
          for (error_policy p : policies) {
            if (o == op::validate && p != error_policy::replace) continue;
            ASSERT_TRUE(emu_check(o, b, p, "seed " + std::to_string(seed - 1)));
          }
      }
    }
  }
}

TEST(Emu, MisalignedAndChunked) {
  std::uint64_t seed = 500;
  for (std::size_t n : {5, 40, 300, 9000}) {
    auto g = rng(seed++);
    bytes b = random_text(g, n, script::mixed);
    corrupt(g, b, 0.01);
    const bytes u = random_utf32(g, n / 4, script::mixed, 0.01, n % 4);
    for (std::size_t m : {1, 3, 6}) {
      for (op o : utf8_ops)
        ASSERT_TRUE(same(run(o, b, error_policy::replace, m), cpu(o, b, error_policy::replace), "misaligned"));
      for (op o : encode_ops)
        ASSERT_TRUE(same(run(o, u, error_policy::replace, m), cpu(o, u, error_policy::replace), "misaligned utf32"));
    }
    for (int k = 0; k < 3; ++k) {
      std::vector<std::size_t> cuts;
      for (int c = 0; c < 3; ++c) cuts.push_back(g() % (b.size() + 1));
      std::sort(cuts.begin(), cuts.end());
      for (op o : utf8_ops)
        for (error_policy p : policies)
          ASSERT_TRUE(same(run_chunked(o, b, p, cuts), cpu(o, b, p), std::string("chunked ") + name(o) + "/" + name(p)));
      std::vector<std::size_t> ucuts;
      for (int c = 0; c < 3; ++c) ucuts.push_back(g() % (u.size() + 1));
      std::sort(ucuts.begin(), ucuts.end());
      for (op o : encode_ops)
        for (error_policy p : policies)
          ASSERT_TRUE(same(run_chunked(o, u, p, ucuts), cpu(o, u, p), std::string("chunked ") + name(o) + "/" + name(p)));
    }
  }
}

TEST(Emu, EncodersMatchCpu) {
  std::uint64_t seed = 100;
  for (std::size_t count : {0, 1, 7, 8, 9, 255, 2047, 2048, 2049, 5000}) {
    for (double rate : {0.0, 0.01, 0.2}) {
      for (std::size_t ragged : {0, 1, 3}) {
        auto g = rng(seed++);
        const bytes u = random_utf32(g, count, script::mixed, rate, ragged);
        for (op o : encode_ops)
          for (error_policy p : policies) ASSERT_TRUE(emu_check(o, u, p, "utf32 seed " + std::to_string(seed - 1)));
      }
    }
  }
}

}  // namespace
}  // namespace gutf8::test::gpu
