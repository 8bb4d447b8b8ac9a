// --gpu-memory SIZE (options::device_memory_limit): parsed like --chunk-size, 0 = no cap; on the
// GPU a cap below the smallest sub-block (src/codec/gpu_backend.hpp) is a device failure for
// --backend=cuda (exit 3, no OUT) and a fall-back to the CPU for --backend=auto, and a cap that
// sub-blocks fit under changes nothing.
// The cases that need a GPU skip, saying so, where none is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "cli_runner.hpp"
#include "gutf8/codec.hpp"

namespace gutf8::cli_test {
namespace {

#define GUTF8_CLI_REQUIRE_GPU()                                                          \
  do {                                                                                   \
    if (!cuda_available()) GTEST_SKIP() << "no usable GPU (gutf8::cuda_available() is false)"; \
  } while (false)

bool mentions_gpu_memory(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text.find("gpu memory") != std::string::npos;
}

using gpu_memory = cli;

// CPU only: always runs.
TEST_F(gpu_memory, SizeIsParsedLikeChunkSize) {
  write("x", "h\xC3\xA9llo");
  for (const char* bad : {"12X", "", "-1", "1.5M", "16KB", "99999999999G"}) {
    SCOPED_TRACE(bad);
    const result r = run({"validate", "--backend=cpu", std::string("--gpu-memory=") + bad, "x"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(r.err.starts_with("gutf8: ")) << r.err;
    EXPECT_NE(r.err.find("--gpu-memory"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
  }
  for (const char* good : {"1G", "0", "1", "64K", "4m"}) {
    SCOPED_TRACE(good);
    const result r = run({"decode", "--backend=cpu", "--gpu-memory", good, "x"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, utf32le(U"h\u00E9llo"));
    EXPECT_EQ(r.err, "");
  }
}

TEST_F(gpu_memory, CudaBackendBelowSmallestSubBlockIsExit3WithoutOutput) {
  GUTF8_CLI_REQUIRE_GPU();
  write("in", text_with_errors(std::size_t{2} << 20, 1));  // sub-blocks of 64 KiB need more than 64 KiB
  const result r = run({"decode", "--backend=cuda", "--gpu-memory", "64K", "in", "-o", "out"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(r.err.starts_with("gutf8: ")) << r.err;
  EXPECT_TRUE(mentions_gpu_memory(r.err)) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line, no trace
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
  EXPECT_EQ(listing(), std::vector<std::string>{"in"});  // no temporary left either
}

TEST_F(gpu_memory, CudaBackendUnderSmallCapEqualsCpu) {
  GUTF8_CLI_REQUIRE_GPU();
  write("in", text_with_errors((std::size_t{20} << 20) + 5, 2));  // two 16 MiB chunks
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"decode", "--errors=replace"}, std::vector<std::string>{"validate", "--json"},
        std::vector<std::string>{"validate", "--drop"}}) {
    SCOPED_TRACE(::testing::PrintToString(command));
    auto cuda = command, cpu = command;
    cuda.insert(cuda.end(), {"--backend=cuda", "--gpu-memory", "4M", "--chunk-size", "16M", "in"});
    cpu.insert(cpu.end(), {"--backend=cpu", "--chunk-size", "16M", "in"});
    const result a = run(cuda), b = run(cpu);
    EXPECT_EQ(a.status, b.status) << a.err;
    EXPECT_TRUE(a.out == b.out) << "output differs: " << a.out.size() << " vs " << b.out.size() << " bytes";
    EXPECT_EQ(a.err, b.err);
  }
}

// --backend=auto --threads 1 lets the GPUs join for a file the one CPU worker would validate in more
// than 1.5 CUDA start-ups (src/codec/auto_model.hpp: about 2.4 GB). The GPU lane must start before
// that worker finishes, and under load (12-16 test processes sharing two GPUs) CUDA's start-up took
// 3.5-5 s, longer than 3 GiB took: 8 GiB, cheap as a sparse file of U+0000, then text with errors.
TEST_F(gpu_memory, AutoBelowSmallestSubBlockFallsBackToCpu) {
  GUTF8_CLI_REQUIRE_GPU();
  const std::string tail = text_with_errors(std::size_t{1} << 20, 3);
  {
    const int fd = ::open((dir_ / "big").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(::pwrite(fd, tail.data(), tail.size(), off_t{8} << 30), ssize_t(tail.size()));
    ::close(fd);
  }
  const result a = run({"validate", "--json", "--verbose", "--backend=auto", "--threads", "1", "--gpu-memory", "64K", "big"});
  const result b = run({"validate", "--json", "--backend=cpu", "big"});
  EXPECT_EQ(a.status, 1) << a.err;
  EXPECT_EQ(b.status, 1) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.err.find("fell back to the CPU: not enough GPU memory"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("; 0 B on the GPU"), std::string::npos) << a.err;
}

}  // namespace
}  // namespace gutf8::cli_test
