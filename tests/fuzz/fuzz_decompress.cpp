// libFuzzer entry point: gutf8::fuzz::check_decompress (tests/fuzz/compress_checks.hpp). A
// disagreement is printed and aborts, so libFuzzer saves the input as a crash artifact.
#include <cstdio>
#include <cstdlib>

#include "fuzz/compress_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string failure = gutf8::fuzz::check_decompress({data, size});
  if (!failure.empty()) {
    std::fputs(failure.c_str(), stderr);
    std::abort();
  }
  return 0;
}
