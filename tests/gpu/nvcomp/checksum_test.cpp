// XXH64 of zstd's content checksums (cuda/nvcomp/xxh64.hpp): on the host against the checksums
// libzstd writes (no GPU needed), then nvcomp::verify_checksums on the device after a batch's
// decompression, for texts around XXH64's 32-byte stripes and at odd offsets of the batch's output.
#include <gtest/gtest.h>

#include "cuda/nvcomp/xxh64.hpp"
#include "support/gpu.hpp"
#include "zstd_frames.hpp"

namespace gutf8::test::nvcomp {
namespace {

namespace xxh = gutf8::cuda::nvcomp::xxh64;

const std::vector<std::size_t> sizes{0, 1, 3, 4, 7, 8, 11, 31, 32, 33, 63, 64, 65, 100, 4099, 65537, 300007};

std::uint32_t stored_checksum(const bytes& frame) { return xxh::load32(frame.data() + frame.size() - 4); }

TEST(NvcompXxh64Host, LowBytesAreZstdsChecksums) {
  for (const std::size_t n : sizes) {
    const bytes text = random_text(n, n + 7);
    const bytes frame = zstd_frame(text, 3, true);
    EXPECT_EQ(std::uint32_t(xxh::hash(text.data(), text.size())), stored_checksum(frame)) << n << " bytes";
  }
}

// The batch's texts back to back (odd offsets), their checksums verified; one stored wrong.
TEST(NvcompZstd, ChecksumsVerifiedOnTheDevice) {
  GUTF8_REQUIRE_GPU();
  std::vector<bytes> frames;
  std::vector<std::size_t> text_sizes;
  std::vector<nv::checksum_frame> checks;
  std::size_t text_at = 0;
  for (const std::size_t n : sizes) {
    const bytes text = random_text(n, n + 7);
    frames.push_back(zstd_frame(text, 3, true));
    text_sizes.push_back(n);
    checks.push_back({text_at, n, stored_checksum(frames.back()), static_cast<std::uint32_t>(checks.size())});
    text_at += n;
  }
  const std::size_t wrong = 13;
  checks[wrong].expected ^= 0x100;  // what a frame whose checksum was damaged would store
  batch_outcome o = run_batch(frames, text_sizes);
  cuda::stream s;
  cuda::device_buffer<std::uint8_t> d_text(text_at);
  cuda::device_buffer<nv::checksum_frame> d_checks(checks.size());
  cuda::device_buffer<nv::frame_result> d_results(o.results.size());
  bytes joined;
  for (const bytes& t : o.texts) joined.insert(joined.end(), t.begin(), t.end());
  d_text.upload(joined, s);
  d_checks.upload(checks, s);
  d_results.upload(o.results, s);
  nv::verify_checksums(reinterpret_cast<const std::byte*>(d_text.data()), d_checks.data(), checks.size(),
                       d_results.data(), s);
  d_results.download(o.results, s);
  s.synchronize();
  for (std::size_t i = 0; i < checks.size(); ++i)
    EXPECT_EQ(o.results[i].verdict, i == wrong ? nv::frame_verdict::checksum_mismatch : nv::frame_verdict::ok)
        << sizes[i] << " bytes";
}

}  // namespace
}  // namespace gutf8::test::nvcomp
