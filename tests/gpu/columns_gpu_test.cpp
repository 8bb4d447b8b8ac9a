// String columns on the GPU (gutf8/device_columns.hpp) against the CPU columns backend, row for
// row. Skips, with the reason printed, without a usable GPU.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cpu/generators.hpp"
#include "gutf8/cuda_resources.hpp"
#include "gutf8/device_columns.hpp"
#include "support/arrow_columns.hpp"
#include "support/gpu.hpp"

namespace gutf8::test {
namespace {

using std::string;

// A host test array copied to the GPU as it is (slice, offsets and junk under nulls included),
// without a validity bitmap when it has no nulls; `misalign` bytes in front of the data make its
// pointer unaligned (the kernels' guarded loads).
class device_strings {
 public:
  explicit device_strings(const arrow_strings& host, bool large, std::size_t misalign = 0)
      : validity_(host.validity().size()), data_(std::max<std::size_t>(host.data().size() + misalign, 1)) {
    const std::vector<std::int64_t> all = host.offsets();
    validity_.upload(std::span(host.validity()));
    if (large) {
      offsets_ = cuda::device_buffer<std::byte>(all.size() * 8);
      cuda::check(cudaMemcpy(offsets_.data(), all.data(), all.size() * 8, cudaMemcpyHostToDevice), "upload");
    } else {
      const std::vector<std::int32_t> narrow(all.begin(), all.end());
      offsets_ = cuda::device_buffer<std::byte>(narrow.size() * 4);
      cuda::check(cudaMemcpy(offsets_.data(), narrow.data(), narrow.size() * 4, cudaMemcpyHostToDevice), "upload");
    }
    cuda::check(cudaMemcpy(data_.data() + misalign, host.data().data(), host.data().size(), cudaMemcpyHostToDevice),
                "upload");
    // No nulls: no bitmap, as most producers hand over (the kernels' shortcut for it).
    buffers_[0] = host.array().null_count == 0 ? nullptr : validity_.data();
    buffers_[1] = offsets_.data();
    buffers_[2] = data_.data() + misalign;
    array_.array = host.array();
    array_.array.buffers = buffers_;
    array_.device_type = ARROW_DEVICE_CUDA;
    int device = 0;
    cuda::check(cudaGetDevice(&device), "cudaGetDevice");
    array_.device_id = device;
    cuda::check(cudaDeviceSynchronize(), "upload");
  }
  [[nodiscard]] const ArrowDeviceArray& array() const noexcept { return array_; }

 private:
  cuda::device_buffer<std::uint8_t> validity_;
  cuda::device_buffer<std::byte> offsets_;
  cuda::device_buffer<char> data_;
  const void* buffers_[3]{};
  ArrowDeviceArray array_{};
};

// A device result copied to host memory, readable with the helpers of arrow_columns.hpp.
class downloaded {
 public:
  explicit downloaded(const column& c) : schema_(c.schema()) {
    const ArrowDeviceArray& d = c.device_array();
    EXPECT_EQ(d.device_type, ARROW_DEVICE_CUDA);
    EXPECT_NE(d.sync_event, nullptr);
    if (d.sync_event != nullptr) cuda::check(cudaEventSynchronize(*static_cast<cudaEvent_t*>(d.sync_event)), "sync_event");
    const string format = schema_.format;
    const auto n = static_cast<std::size_t>(d.array.length);
    const std::size_t width = format == "l" || format == "U" ? 8 : format == "C" ? 1 : format == "b" ? 0 : 4;
    bufs_.resize(static_cast<std::size_t>(d.array.n_buffers));
    get(d.array, 0, (n + 7) / 8);
    if (format == "b") get(d.array, 1, (n + 7) / 8);
    else if (format == "u" || format == "U") {
      get(d.array, 1, (n + 1) * width);
      const std::int64_t total = width == 8 ? reinterpret_cast<const std::int64_t*>(bufs_[1].data())[n]
                                            : reinterpret_cast<const std::int32_t*>(bufs_[1].data())[n];
      get(d.array, 2, static_cast<std::size_t>(total));
    } else {
      get(d.array, 1, n * width);
    }
    array_ = d.array;
    for (std::size_t k = 0; k < bufs_.size(); ++k)
      pointers_.push_back(d.array.buffers[k] == nullptr ? nullptr : bufs_[k].data());
    array_.buffers = pointers_.data();
  }
  [[nodiscard]] const ArrowArray& array() const noexcept { return array_; }
  [[nodiscard]] const ArrowSchema& schema() const noexcept { return schema_; }

 private:
  void get(const ArrowArray& a, std::size_t k, std::size_t bytes) {
    if (a.buffers[k] == nullptr) return;
    bufs_[k].resize(std::max<std::size_t>(bytes, 1));
    cuda::check(cudaMemcpy(bufs_[k].data(), a.buffers[k], bytes, cudaMemcpyDeviceToHost), "download");
  }
  ArrowSchema schema_;
  ArrowArray array_{};
  std::vector<std::vector<char>> bufs_;
  std::vector<const void*> pointers_;
};

void expect_same_as_cpu(const std::vector<row>& rows, const arrow_layout& layout, std::size_t misalign = 0) {
  arrow_strings host(rows, layout);
  const device_strings gpu(host, layout.large, misalign);
  cuda::stream stream;
  column_options opt;
  opt.data_bytes = host.data_bytes();
  opt.first_errors = true;

  const row_validity cv = is_valid(host.array(), host.schema(), opt);
  const row_validity gv = device::is_valid(gpu.array(), host.schema(), opt, stream);
  EXPECT_EQ(gv.invalid_rows, cv.invalid_rows);
  EXPECT_EQ(gv.first, cv.first);
  const downloaded gvalid(gv.valid), goffsets(gv.error_offsets), gkinds(gv.error_kinds);
  EXPECT_EQ(bools_of(gvalid.array(), gvalid.schema()), bools_of(cv.valid.array(), cv.valid.schema()));
  EXPECT_EQ(ints_of(goffsets.array(), goffsets.schema()), ints_of(cv.error_offsets.array(), cv.error_offsets.schema()));
  EXPECT_EQ(ints_of(gkinds.array(), gkinds.schema()), ints_of(cv.error_kinds.array(), cv.error_kinds.schema()));

  if (cv.first) {
    try {
      device::validate(gpu.array(), host.schema(), opt, stream);
      ADD_FAILURE() << "device validate accepted an invalid column";
    } catch (const invalid_row& e) {
      EXPECT_EQ((row_error{e.row(), e.offset(), e.kind()}), *cv.first);
    }
    EXPECT_THROW((void)device::cast_to_utf8(gpu.array(), host.schema(), on_invalid::raise, opt, stream), invalid_row);
  }
  for (const on_invalid p : {on_invalid::null, on_invalid::replace, on_invalid::drop}) {
    SCOPED_TRACE(static_cast<int>(p));
    const column cc = cast_to_utf8(host.array(), host.schema(), p, opt);
    const downloaded gc(device::cast_to_utf8(gpu.array(), host.schema(), p, opt, stream));
    EXPECT_STREQ(gc.schema().format, cc.schema().format);
    EXPECT_EQ(strings_of(gc.array(), gc.schema()), strings_of(cc.array(), cc.schema()));
    const column cn = count_code_points(host.array(), host.schema(), p, opt);
    const downloaded gn(device::count_code_points(gpu.array(), host.schema(), p, opt, stream));
    EXPECT_EQ(ints_of(gn.array(), gn.schema()), ints_of(cn.array(), cn.schema()));
  }
  const downloaded gm(device::make_valid(gpu.array(), host.schema(), error_policy::replace, opt, stream));
  EXPECT_EQ(strings_of(gm.array(), gm.schema()), expect_cast(rows, on_invalid::replace));
}

std::vector<row> edge_rows() {
  return {string("abc"), string("\xE2\x82"), std::nullopt, string("\xAC rest"), string(""), string("\xC3\xA9"),
          string("\xF0\x9F\x98"), string("\x80"), std::nullopt, string("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41"),
          string("\xED\xA0\x80"), string("\xC0\xAF"), string("\xF4\x90\x80\x80"), string("x\xFF"), string("\xE2")};
}

TEST(GpuColumns, EdgeRowsEveryLayout) {
  GUTF8_REQUIRE_GPU();
  for (const bool large : {false, true})
    for (const bool binary : {false, true})
      for (const std::int64_t slice : {0, 5})
        for (const std::int64_t base : {0, 3}) {
          SCOPED_TRACE(testing::Message() << large << binary << slice << base);
          expect_same_as_cpu(edge_rows(), arrow_layout{large, binary, slice, base, "\xE2\x82"});
          expect_same_as_cpu({}, arrow_layout{large, binary, slice, base, ""});
          expect_same_as_cpu({std::nullopt, string("")}, arrow_layout{large, binary, slice, base, "\x80"});
        }
}

// Rows of random sizes around the 32-byte lane and the 1 KiB warp segment; 1 in 5 dirty.
TEST(GpuColumns, RandomRowsAroundSegments) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(17);
  std::uniform_int_distribution<std::size_t> size(0, 2100);
  std::bernoulli_distribution null(0.05), dirty(0.2);
  std::vector<row> rows;
  for (const std::size_t n : {31u, 32u, 33u, 255u, 1023u, 1024u, 1025u, 2047u, 2049u, 1u, 3u})
    rows.push_back(random_text(g, n, 0.01));
  for (int i = 0; i < 20011; ++i)
    rows.push_back(null(g) ? std::nullopt : row(random_text(g, size(g), dirty(g) ? 0.03 : 0.0)));
  expect_same_as_cpu(rows, arrow_layout{false, true, 2, 1, "\xF0"});
  expect_same_as_cpu(rows, arrow_layout{true, false, 0, 0, ""});
}

// Clean columns: the repair is a copy of the bytes (with and without nulls that hold bytes, an
// unaligned data pointer, offsets that do not start at 0).
TEST(GpuColumns, CleanColumnsAreCopied) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(19);
  std::uniform_int_distribution<std::size_t> size(0, 300);
  std::vector<row> clean, with_nulls;
  for (int i = 0; i < 9001; ++i) {
    clean.push_back(random_text(g, size(g), 0.0));
    with_nulls.push_back(i % 13 == 5 ? std::nullopt : clean.back());
  }
  expect_same_as_cpu(clean, arrow_layout{false, true, 0, 0, ""});
  expect_same_as_cpu(clean, arrow_layout{true, false, 7, 13, ""}, 5);
  expect_same_as_cpu(with_nulls, arrow_layout{false, true, 3, 1, "\xE2\x82\xAC"});  // junk under nulls
  expect_same_as_cpu(with_nulls, arrow_layout{false, true, 0, 0, ""}, 3);             // empty nulls
}

TEST(GpuColumns, MillionsOfTinyRows) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(23);
  std::uniform_int_distribution<std::size_t> size(0, 5);
  std::bernoulli_distribution null(0.01), dirty(0.01);
  std::vector<row> rows;
  for (int i = 0; i < 3'000'017; ++i)
    rows.push_back(null(g) ? std::nullopt : row(random_text(g, size(g), dirty(g) ? 0.5 : 0.0)));
  expect_same_as_cpu(rows, arrow_layout{false, true, 1, 0, "\x80"});
}

// One row far beyond a tile, with errors near its start, middle and end.
TEST(GpuColumns, OneHugeRow) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(29);
  string text = random_text(g, (std::size_t{96} << 20) + 5, 0.0);
  text[1] = '\xFF';
  text[text.size() / 2] = '\xC0';
  text.back() = '\xE2';
  expect_same_as_cpu({string("x"), text, std::nullopt, string("\xBF")}, arrow_layout{true, true, 0, 0, ""});
}

// A large_binary row of more than 2^31 bytes: 64-bit offsets, positions and counts throughout.
TEST(GpuColumns, RowBeyondTwoGiB) {
  GUTF8_REQUIRE_GPU();
  std::size_t free_bytes = 0, total_bytes = 0;
  cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (free_bytes < (std::size_t{12} << 30)) GTEST_SKIP() << "needs 12 GiB of free GPU memory";
  string text((std::size_t{1} << 31) + 4099, 'a');
  for (std::size_t k = 0; k + 1 < text.size(); k += 7919) text[k] = '\xC3', text[k + 1] = '\xA9';
  text[(std::size_t{1} << 31) + 17] = '\x80';  // an error past 2^31
  const std::vector<row> rows{string("a"), text, string("\xE2\x82\xAC")};
  arrow_strings host(rows, arrow_layout{true, true, 0, 0, ""});
  const device_strings gpu(host, true);
  cuda::stream stream;
  const row_validity gv = device::is_valid(gpu.array(), host.schema(), {}, stream);
  ASSERT_TRUE(gv.first.has_value());
  EXPECT_EQ(gv.first->row, 1);
  EXPECT_EQ(gv.first->offset, (std::uint64_t{1} << 31) + 17);
  const downloaded gc(device::count_code_points(gpu.array(), host.schema(), on_invalid::replace, {}, stream));
  const column cc = count_code_points(host.array(), host.schema(), on_invalid::replace);
  EXPECT_EQ(ints_of(gc.array(), gc.schema()), ints_of(cc.array(), cc.schema()));
  const downloaded gm(device::make_valid(gpu.array(), host.schema(), error_policy::replace, {}, stream));
  const column cm = make_valid(host.array(), host.schema(), error_policy::replace);
  EXPECT_TRUE(strings_of(gm.array(), gm.schema()) == strings_of(cm.array(), cm.schema()));
}

// Small enough for compute-sanitizer memcheck (run with --gtest_filter=GpuColumns.Sanitizer*).
TEST(GpuColumns, SanitizerSized) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(31);
  std::vector<row> rows = edge_rows();
  for (int i = 0; i < 300; ++i) rows.push_back(i % 11 == 0 ? std::nullopt : row(random_text(g, 1 + i % 1100, 0.02)));
  expect_same_as_cpu(rows, arrow_layout{false, true, 3, 2, "\xC3"});
  expect_same_as_cpu(rows, arrow_layout{true, false, 0, 5, "\xC3"}, 1);
}

// Results from a caller's pool, repeated so that freed memory comes back, each made on a stream
// that is gone before the result is read or released (the release waits for the call's work).
TEST(GpuColumns, ResultsFromAPoolOutliveTheirStream) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(37);
  std::vector<row> rows;
  for (int i = 0; i < 20'011; ++i) rows.push_back(i % 13 == 0 ? std::nullopt : row(random_text(g, i % 301, 0.01)));
  arrow_strings host(rows, arrow_layout{false, true, 0, 0, "\xE2"});
  const device_strings gpu(host, false);
  const column cm = make_valid(host.array(), host.schema(), error_policy::replace);
  const column cn = count_code_points(host.array(), host.schema(), on_invalid::null);
  const cuda::memory_pool pool;
  for (int round = 0; round < 4; ++round) {
    std::vector<column> made;
    {
      cuda::stream stream;
      made.push_back(device::make_valid(gpu.array(), host.schema(), error_policy::replace, {}, stream, pool.get()));
      made.push_back(device::count_code_points(gpu.array(), host.schema(), on_invalid::null, {}, stream, pool.get()));
    }
    const downloaded gm(made[0]);
    EXPECT_TRUE(strings_of(gm.array(), gm.schema()) == strings_of(cm.array(), cm.schema())) << "round " << round;
    const downloaded gn(made[1]);
    EXPECT_EQ(ints_of(gn.array(), gn.schema()), ints_of(cn.array(), cn.schema())) << "round " << round;
  }
  cuda::check(cudaDeviceSynchronize(), "released results");
}

TEST(GpuColumns, BadInput) {
  arrow_strings host({string("ab"), string("cd")});
  ArrowDeviceArray on_host{};
  on_host.array = host.array();
  on_host.device_type = ARROW_DEVICE_CPU;
  EXPECT_THROW((void)device::is_valid(on_host, host.schema()), error);  // before any CUDA call
  GUTF8_REQUIRE_GPU();
  const device_strings gpu(host, false);
  EXPECT_THROW((void)host_array(gpu.array()), error);
  column_options opt;
  opt.data_bytes = host.offsets()[2] - 1;  // the last row runs past the data
  EXPECT_THROW((void)device::make_valid(gpu.array(), host.schema(), error_policy::replace, opt), error);
  EXPECT_THROW((void)device::make_valid(gpu.array(), host.schema(), error_policy::strict), error);
  ArrowSchema wrong = host.schema();
  wrong.format = "l";
  EXPECT_THROW((void)device::count_code_points(gpu.array(), wrong, on_invalid::null), error);
}

}  // namespace
}  // namespace gutf8::test
