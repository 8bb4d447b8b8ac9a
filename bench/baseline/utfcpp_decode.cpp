// The "small utfcpp-based converter" of the end-to-end benchmark (scripts/bench_e2e.sh):
// UTF-8 from FILE (or standard input) to UTF-32LE on standard output, 16 MiB at a time,
// written the way a user of utfcpp would write it. Valid text goes through the checked
// utf8::utf8to32; a chunk with invalid bytes is first repaired with utf8::replace_invalid
// (utfcpp's own replacement policy, which is not Unicode's maximal subparts: this is a speed
// baseline, never an oracle for invalid input).
//   utfcpp_decode [FILE]
#include <utf8.h>

#include <cstdio>
#include <cstring>
#include <iterator>
#include <vector>

namespace {

constexpr std::size_t chunk_bytes = std::size_t{16} << 20;

// Where the last sequence of data[0, n) begins if it may continue in the next chunk.
std::size_t cut_of(const char* data, std::size_t n, bool at_end) {
  if (at_end) return n;
  for (std::size_t k = 1; k <= 3 && k <= n; ++k)
    if ((static_cast<unsigned char>(data[n - k]) & 0xC0u) != 0x80u) return n - k;
  return n;
}

bool write_all(const std::vector<char32_t>& out) {
  return std::fwrite(out.data(), sizeof(char32_t), out.size(), stdout) == out.size();
}

}  // namespace

int main(int argc, char** argv) {
  std::FILE* in = argc > 1 ? std::fopen(argv[1], "rb") : stdin;
  if (in == nullptr) {
    std::perror(argv[1]);
    return 3;
  }
  std::vector<char> buf(chunk_bytes + 3), repaired;
  std::vector<char32_t> out;
  std::size_t held = 0;  // bytes carried from the previous chunk
  for (;;) {
    const std::size_t got = std::fread(buf.data() + held, 1, chunk_bytes, in);
    const std::size_t n = held + got;
    const bool at_end = got < chunk_bytes;
    const std::size_t cut = cut_of(buf.data(), n, at_end);
    const char* begin = buf.data();
    const char* end = begin + cut;
    if (utf8::find_invalid(begin, end) != end) {
      repaired.clear();
      utf8::replace_invalid(begin, end, std::back_inserter(repaired));
      begin = repaired.data();
      end = begin + repaired.size();
    }
    out.clear();
    utf8::utf8to32(begin, end, std::back_inserter(out));
    if (!write_all(out)) {
      std::perror("utfcpp_decode: write");
      return 3;
    }
    if (at_end) break;
    held = n - cut;
    std::memmove(buf.data(), buf.data() + cut, held);
  }
  return 0;
}
