// String columns on the GPU (gutf8/device_columns.hpp) against the CPU columns backend, row for
// row, in every layout (view arrays included). Skips, with the reason printed, without a usable GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cpu/generators.hpp"
#include "cuda/cuda_resources.hpp"
#include "gutf8/device_columns.hpp"
#include "support/arrow_columns.hpp"
#include "support/gpu.hpp"

namespace gutf8::test {
namespace {

using std::string;

// Device copies of a host test array's buffers and the ArrowDeviceArray over them (the buffers
// table a host array of device pointers, as the Device Data Interface has it).
class device_arrow {
 public:
  [[nodiscard]] const ArrowDeviceArray& array() const noexcept { return array_; }

 protected:
  // A device copy of `bytes` at `host` (null stays null), `misalign` bytes into its allocation.
  void add(const void* host, std::size_t bytes, std::size_t misalign = 0) {
    if (host == nullptr) {
      pointers_.push_back(nullptr);
      return;
    }
    const cuda::device_buffer<char>& d = memory_.emplace_back(std::max<std::size_t>(bytes + misalign, 1));
    cuda::check(cudaMemcpy(d.data() + misalign, host, bytes, cudaMemcpyHostToDevice), "upload");
    pointers_.push_back(d.data() + misalign);
  }
  // The array over the buffers added, on the current device, its uploads finished.
  void finish(const ArrowArray& host) {
    array_.array = host;
    array_.array.buffers = pointers_.data();
    array_.device_type = ARROW_DEVICE_CUDA;
    int device = 0;
    cuda::check(cudaGetDevice(&device), "cudaGetDevice");
    array_.device_id = device;
    cuda::check(cudaDeviceSynchronize(), "upload");
  }

 private:
  std::deque<cuda::device_buffer<char>> memory_;
  std::vector<const void*> pointers_;
  ArrowDeviceArray array_{};
};

// A host test array copied to the GPU as it is (slice, offsets and junk under nulls included),
// without a validity bitmap when it has no nulls; `misalign` bytes in front of the data make its
// pointer unaligned (the kernels' guarded loads).
class device_strings : public device_arrow {
 public:
  explicit device_strings(const arrow_strings& host, bool large, std::size_t misalign = 0) {
    const std::vector<std::int64_t> all = host.offsets();
    // No nulls: no bitmap, as most producers hand over (the kernels' shortcut for it).
    add(host.array().null_count == 0 ? nullptr : host.validity().data(), host.validity().size());
    if (large) {
      add(all.data(), all.size() * 8);
    } else {
      const std::vector<std::int32_t> narrow(all.begin(), all.end());
      add(narrow.data(), narrow.size() * 4);
    }
    add(host.data().data(), host.data().size(), misalign);
    finish(host.array());
  }
};

// A host view array (arrow_layout::view) copied to the GPU as it is: validity, views, every data
// buffer and the variadic sizes buffer in device memory; a missing data buffer stays missing.
// `misalign` bytes in front of the views and data buffers take the views off 16-byte (or any)
// alignment.
class device_views : public device_arrow {
 public:
  explicit device_views(const arrow_strings& host, std::size_t misalign = 0) {
    const ArrowArray& a = host.array();
    const auto count = static_cast<std::size_t>(a.n_buffers - 3);
    const auto* sizes = static_cast<const std::int64_t*>(a.buffers[a.n_buffers - 1]);
    // No nulls: no bitmap, as most producers hand over.
    add(a.null_count == 0 ? nullptr : host.validity().data(), host.validity().size());
    add(host.views().data(), host.views().size(), misalign);
    for (std::size_t k = 0; k < count; ++k) add(a.buffers[2 + k], static_cast<std::size_t>(sizes[k]), misalign);
    add(sizes, count * sizeof(std::int64_t));
    finish(a);
  }
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
    } else if (format == "vu") {  // validity, views, one data buffer, its size
      get(d.array, 1, n * 16);
      get(d.array, 3, sizeof(std::int64_t));
      get(d.array, 2, static_cast<std::size_t>(*reinterpret_cast<const std::int64_t*>(bufs_[3].data())));
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

// The bytes [0, n) of a host buffer (an absent one: empty).
string bytes_of(const void* p, std::size_t n) { return p == nullptr ? string() : string(static_cast<const char*>(p), n); }

// A utf8_view result of the GPU laid out byte for byte as the host's: validity, every view (inline
// bytes zero padded, prefixes, buffer index, offsets), the data buffer and its size.
void expect_same_view_layout(const downloaded& gpu, const column& cpu) {
  const ArrowArray& g = gpu.array();
  const ArrowArray& c = cpu.array();
  ASSERT_STREQ(gpu.schema().format, "vu");
  ASSERT_STREQ(cpu.schema().format, "vu");
  ASSERT_EQ(g.n_buffers, 4);
  ASSERT_EQ(c.n_buffers, 4);
  ASSERT_EQ(g.length, c.length);
  EXPECT_EQ(g.null_count, c.null_count);
  const auto n = static_cast<std::size_t>(c.length);
  EXPECT_EQ(bytes_of(g.buffers[0], (n + 7) / 8), bytes_of(c.buffers[0], (n + 7) / 8));
  EXPECT_EQ(bytes_of(g.buffers[1], 16 * n), bytes_of(c.buffers[1], 16 * n));
  const std::int64_t total = *static_cast<const std::int64_t*>(c.buffers[3]);
  EXPECT_EQ(*static_cast<const std::int64_t*>(g.buffers[3]), total);
  EXPECT_EQ(bytes_of(g.buffers[2], static_cast<std::size_t>(total)), bytes_of(c.buffers[2], static_cast<std::size_t>(total)));
}

// Every operation and policy on the GPU array against the host API on its host copy.
void expect_operations_as_cpu(const arrow_strings& host, const ArrowDeviceArray& gpu, std::int64_t data_bytes) {
  cuda::stream stream;
  const ArrowSchema& schema = host.schema();
  column_options opt;
  opt.data_bytes = data_bytes;
  opt.first_errors = true;

  const row_validity cv = is_valid(host.array(), schema, opt);
  const row_validity gv = device::is_valid(gpu, schema, opt, stream);
  EXPECT_EQ(gv.invalid_rows, cv.invalid_rows);
  EXPECT_EQ(gv.first, cv.first);
  const downloaded gvalid(gv.valid), goffsets(gv.error_offsets), gkinds(gv.error_kinds);
  EXPECT_EQ(bools_of(gvalid.array(), gvalid.schema()), bools_of(cv.valid.array(), cv.valid.schema()));
  EXPECT_EQ(ints_of(goffsets.array(), goffsets.schema()), ints_of(cv.error_offsets.array(), cv.error_offsets.schema()));
  EXPECT_EQ(ints_of(gkinds.array(), gkinds.schema()), ints_of(cv.error_kinds.array(), cv.error_kinds.schema()));

  if (cv.first) {
    try {
      device::validate(gpu, schema, opt, stream);
      ADD_FAILURE() << "device validate accepted an invalid column";
    } catch (const invalid_row& e) {
      EXPECT_EQ((row_error{e.row(), e.offset(), e.kind()}), *cv.first);
    }
    EXPECT_THROW((void)device::cast_to_utf8(gpu, schema, on_invalid::raise, opt, stream), invalid_row);
    EXPECT_THROW((void)device::count_code_points(gpu, schema, on_invalid::raise, opt, stream), invalid_row);
  } else {
    EXPECT_NO_THROW(device::validate(gpu, schema, opt, stream));
  }
  for (const on_invalid p : {on_invalid::raise, on_invalid::null, on_invalid::replace, on_invalid::drop}) {
    if (p == on_invalid::raise && cv.first) continue;
    SCOPED_TRACE(static_cast<int>(p));
    const column cc = cast_to_utf8(host.array(), schema, p, opt);
    const downloaded gc(device::cast_to_utf8(gpu, schema, p, opt, stream));
    EXPECT_STREQ(gc.schema().format, cc.schema().format);
    EXPECT_EQ(strings_of(gc.array(), gc.schema()), strings_of(cc.array(), cc.schema()));
    if (string(cc.schema().format) == "vu") expect_same_view_layout(gc, cc);
    const column cn = count_code_points(host.array(), schema, p, opt);
    const downloaded gn(device::count_code_points(gpu, schema, p, opt, stream));
    EXPECT_STREQ(gn.schema().format, cn.schema().format);
    EXPECT_EQ(ints_of(gn.array(), gn.schema()), ints_of(cn.array(), cn.schema()));
  }
  for (const error_policy p : {error_policy::replace, error_policy::drop}) {
    const column cm = make_valid(host.array(), schema, p, opt);
    const downloaded gm(device::make_valid(gpu, schema, p, opt, stream));
    EXPECT_STREQ(gm.schema().format, cm.schema().format);
    EXPECT_EQ(strings_of(gm.array(), gm.schema()), strings_of(cm.array(), cm.schema()));
    if (string(cm.schema().format) == "vu") expect_same_view_layout(gm, cm);
  }
}

// The rows in `layout` on the GPU against the CPU backend, and make_valid against the oracle.
// `misalign`: bytes in front of the data (the views and their data buffers for a view layout).
void expect_same_as_cpu(const std::vector<row>& rows, const arrow_layout& layout, std::size_t misalign = 0) {
  arrow_strings host(rows, layout);
  std::optional<device_strings> strings;
  std::optional<device_views> views;
  const ArrowDeviceArray& gpu = layout.view ? views.emplace(host, misalign).array()
                                            : strings.emplace(host, layout.large, misalign).array();
  expect_operations_as_cpu(host, gpu, layout.view ? -1 : host.data_bytes());
  cuda::stream stream;
  const downloaded gm(device::make_valid(gpu, host.schema(), error_policy::replace, {}, stream));
  EXPECT_EQ(strings_of(gm.array(), gm.schema()), expect_cast(rows, on_invalid::replace));
}

// Random valid text of `bytes` with errors at its second byte, its middle and its end: a row far
// longer than a tile or a warp's share.
string long_row_with_errors(std::mt19937_64& g, std::size_t bytes) {
  string text = random_text(g, bytes, 0.0);
  text[1] = '\xFF';
  text[text.size() / 2] = '\xC0';
  text.back() = '\xE2';
  return text;
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

// Rows of random sizes around the 32-byte lane and the 1 KiB warp tile; 1 in 5 dirty.
TEST(GpuColumns, RandomRowsAroundWarpTiles) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(17);
  std::vector<row> rows;
  for (const std::size_t n : {31u, 32u, 33u, 255u, 1023u, 1024u, 1025u, 2047u, 2049u, 1u, 3u})
    rows.push_back(random_text(g, n, 0.01));
  add_random_rows(rows, g, 20011, 2100, 0.05, 0.2, 0.03);
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
  std::vector<row> rows;
  add_random_rows(rows, g, 3'000'017, 5, 0.01, 0.01, 0.5);
  expect_same_as_cpu(rows, arrow_layout{false, true, 1, 0, "\x80"});
}

// One row far beyond a tile, with errors near its start, middle and end.
TEST(GpuColumns, OneHugeRow) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(29);
  const string text = long_row_with_errors(g, (std::size_t{96} << 20) + 5);
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


// ---- view arrays (utf8_view "vu", binary_view "vz"): gathered on the GPU, results as the host's --

arrow_layout view_layout(bool binary, std::int64_t slice, int buffers) {
  return arrow_layout{false, binary, slice, 0, "", true, buffers};
}

// edge_rows (all inline) and rows at the 12-byte inline limit and beyond, with errors on their
// first or last byte and sequences cut by their ends.
std::vector<row> view_edge_rows() {
  std::vector<row> rows = edge_rows();
  for (const string& r : {string("123456789AB\xE2"), string("123456789ABC\xE2"), string("\x80" "23456789ABCD"),
                          string("123456789ABC"), string("123456789ABCD"), string("\xC3\xA9" "3456789ABC\xC3\xA9"),
                          string("a row longer than a view holds inline, cut \xF0\x9F\x98"),
                          string("\xBF a long row that begins with a stray continuation byte"),
                          string("\xE2\x82\xAC a long clean row: \xF0\x9F\x98\x80 \xC3\xA9\xE2\x82\xAC"),
                          string(1500, 'a') + "\xE2\x82", string(1024, 'b'), string(1023, 'c') + "\xFF"}) {
    rows.push_back(r);
    rows.push_back(std::nullopt);
  }
  return rows;
}

TEST(GpuColumnViews, EdgeRowsEveryLayout) {
  GUTF8_REQUIRE_GPU();
  for (const bool binary : {false, true})
    for (const std::int64_t slice : {0, 5})
      for (const int buffers : {1, 2, 3})
        for (const std::size_t misalign : {0u, 3u, 8u}) {
          SCOPED_TRACE(testing::Message() << binary << slice << buffers << misalign);
          const arrow_layout l = view_layout(binary, slice, buffers);
          expect_same_as_cpu(view_edge_rows(), l, misalign);
          expect_same_as_cpu({}, l, misalign);
          expect_same_as_cpu({std::nullopt, string("")}, l, misalign);
          expect_same_as_cpu({std::nullopt, std::nullopt, std::nullopt}, l, misalign);
          expect_same_as_cpu({string(""), string("")}, l, misalign);
        }
}

// Rows of random sizes around the 12-byte inline limit, the 32-byte lane and the 1 KiB warp tile
// (of the gathered bytes and of the repaired long rows); 1 in 5 dirty, some null.
TEST(GpuColumnViews, RandomRowsAroundWarpTiles) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(37);
  std::uniform_int_distribution<std::size_t> size(0, 2100), small(0, 20);
  std::bernoulli_distribution null(0.05), dirty(0.2), tiny(0.5);
  std::vector<row> rows;
  for (const std::size_t n : {11u, 12u, 13u, 31u, 32u, 33u, 1019u, 1023u, 1024u, 1025u, 2047u, 2049u, 1u, 3u})
    rows.push_back(random_text(g, n, 0.01));
  for (int i = 0; i < 20011; ++i)
    rows.push_back(null(g) ? std::nullopt
                           : row(random_text(g, tiny(g) ? small(g) : size(g), dirty(g) ? 0.03 : 0.0)));
  expect_same_as_cpu(rows, view_layout(true, 2, 3));
  expect_same_as_cpu(rows, view_layout(false, 0, 1), 3);
  expect_same_as_cpu(rows, view_layout(true, 7, 2), 8);
}

// Mostly inline rows (the copy's per-row cursor over millions of rows).
TEST(GpuColumnViews, MillionsOfTinyRows) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(41);
  std::vector<row> rows;
  add_random_rows(rows, g, 2'000'003, 14, 0.01, 0.01, 0.5);
  expect_same_as_cpu(rows, view_layout(true, 1, 3));
}

// A long row copied by many warps, errors near its start, middle and end, among short ones.
TEST(GpuColumnViews, OneLongRow) {
  GUTF8_REQUIRE_GPU();
  auto g = rng(43);
  const string text = long_row_with_errors(g, (std::size_t{40} << 20) + 7);
  expect_same_as_cpu({string("x"), text, std::nullopt, string("\xBF"), string("a clean long row, 20 B")},
                     view_layout(true, 0, 2));
}

// Views that share bytes (two rows reading the same bytes, a row inside another), clean and not.
TEST(GpuColumnViews, ViewsThatShareBytes) {
  GUTF8_REQUIRE_GPU();
  const std::vector<row> rows{string("a long row that others point into \xE2\x82\xAC!"), string("short"),
                              string("another long row with an error \xF0\x9F"), std::nullopt,
                              string("a third long row, clean"), string("tiny")};
  arrow_strings host(rows, view_layout(true, 0, 2));
  std::memcpy(host.view(5), host.view(0), 16);  // row 5 reads row 0's bytes
  std::int32_t n = 20, at = 0;
  std::memcpy(host.view(4), host.view(2), 16);  // row 4: 20 bytes from inside row 2
  std::memcpy(&at, host.view(2) + 12, 4);
  at += 5;
  std::memcpy(host.view(4), &n, 4);
  std::memcpy(host.view(4) + 12, &at, 4);
  const device_views gpu(host);
  expect_operations_as_cpu(host, gpu.array(), -1);
}

// Every operation throws invalid_argument, with the host's message (the first bad row's), and
// nothing is returned; views that are never read (null rows, rows outside the slice, the buffer
// fields of inline views) do not matter.
TEST(GpuColumnViews, BadViewsAreRejectedAsOnTheHost) {
  const std::vector<row> rows{string("short"), string("a row longer than twelve bytes"), std::nullopt,
                              string("another row of more than 12 bytes"), string("x")};
  {
    const arrow_strings host(rows, view_layout(false, 0, 2));
    ArrowDeviceArray on_host{};
    on_host.array = host.array();
    on_host.device_type = ARROW_DEVICE_CPU;
    EXPECT_THROW((void)device::make_valid(on_host, host.schema(), error_policy::replace), error);  // before any CUDA call
  }
  GUTF8_REQUIRE_GPU();
  const auto set = [](std::uint8_t* view, int field, std::int32_t v) { std::memcpy(view + 4 * field, &v, 4); };
  const auto field = [](const std::uint8_t* view, int k) {
    std::int32_t v = 0;
    std::memcpy(&v, view + 4 * k, 4);
    return v;
  };
  const auto expect_rejected = [&](const arrow_strings& host, const char* what) {
    SCOPED_TRACE(what);
    string cpu_message;
    try {
      (void)is_valid(host.array(), host.schema());
      ADD_FAILURE() << "the host accepted it";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      cpu_message = e.what();
    }
    const device_views gpu(host);
    cuda::stream stream;
    const auto same = [&](const auto& call) {
      try {
        call();
        ADD_FAILURE() << "the GPU accepted it";
      } catch (const invalid_row& e) {
        ADD_FAILURE() << "invalid_row instead of invalid_argument: " << e.what();
      } catch (const error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_EQ(string(e.what()), cpu_message);
      }
    };
    const ArrowDeviceArray& a = gpu.array();
    same([&] { (void)device::is_valid(a, host.schema(), {}, stream); });
    same([&] { device::validate(a, host.schema(), {}, stream); });
    same([&] { (void)device::make_valid(a, host.schema(), error_policy::replace, {}, stream); });
    same([&] { (void)device::cast_to_utf8(a, host.schema(), on_invalid::null, {}, stream); });
    same([&] { (void)device::count_code_points(a, host.schema(), on_invalid::replace, {}, stream); });
  };
  for (const bool binary : {false, true}) {
    const arrow_layout l = view_layout(binary, 1, 2);
    {
      arrow_strings host(rows, l);
      set(host.view(3), 0, -1);
      expect_rejected(host, "negative length");
    }
    for (const std::int32_t index : {2, -1, 1 << 30}) {
      arrow_strings host(rows, l);
      set(host.view(1), 2, index);
      expect_rejected(host, "buffer index past the data buffers");
    }
    for (const std::int32_t delta : {1, -1000}) {  // one byte past its buffer's end; before its start
      arrow_strings host(rows, l);
      const std::int64_t size = static_cast<const std::int64_t*>(host.array().buffers[4])[field(host.view(1), 2)];
      set(host.view(1), 3, delta > 0 ? static_cast<std::int32_t>(size - field(host.view(1), 0) + delta) : delta);
      expect_rejected(host, "bytes past its data buffer");
    }
    {
      arrow_strings host(rows, l);
      host.set_view_buffer(static_cast<std::size_t>(field(host.view(3), 2)), nullptr);
      expect_rejected(host, "missing data buffer");
    }
    {  // two bad rows: the first one is named
      arrow_strings host(rows, l);
      set(host.view(4), 0, -7);
      set(host.view(1), 2, 5);
      expect_rejected(host, "two bad views");
    }
    {  // never read: a null row's view, the slot before the slice, an inline view's buffer fields
      arrow_strings host(rows, l);
      set(host.view(2), 0, -1);
      set(host.view(-1), 0, -1);
      set(host.view(0), 2, 99);
      set(host.view(0), 3, -5);
      const device_views gpu(host);
      expect_operations_as_cpu(host, gpu.array(), -1);
    }
  }
}

}  // namespace
}  // namespace gutf8::test
