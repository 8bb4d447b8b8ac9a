#include "file_runner.hpp"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdio>

namespace gutf8_py {
namespace {

class collector final : public gutf8::run_observer {
 public:
  collector(std::vector<file_outcome>& out, const file_sink& sink, const std::function<void(std::uint64_t)>& progress)
      : out_(out), sink_(sink), progress_(progress) {}
  bool output(std::size_t index, std::span<const std::byte> bytes) override {
    if (sink_) sink_(index, bytes);
    return true;
  }
  void done(std::size_t index, const gutf8::input_report& report) override { out_[index].report = report; }
  void failed(std::size_t index, const gutf8::error& why) override { out_[index].failure = why; }
  void progress(std::uint64_t bytes) override {
    if (progress_) progress_(bytes);
  }

 private:
  std::vector<file_outcome>& out_;
  const file_sink& sink_;
  const std::function<void(std::uint64_t)>& progress_;
};

}  // namespace

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw gutf8::system_call_failure(errno, path);
  if (!S_ISREG(st.st_mode)) throw gutf8::error(gutf8::errc::io_failure, path + ": not a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

bool compressed_file(const std::string& path) {
  std::array<std::byte, 16> head{};
  std::size_t got = 0;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    got = std::fread(head.data(), 1, head.size(), f);
    std::fclose(f);
  }
  return gutf8::sniff_compression(std::span(head).first(got)) != gutf8::compression::none;
}

std::vector<file_outcome> run_files(const std::vector<std::string>& paths, const gutf8::run_config& config,
                                    const file_sink& sink, const std::function<void(std::uint64_t)>& progress,
                                    double* seconds) {
  std::vector<gutf8::input> inputs;
  inputs.reserve(paths.size());
  for (const std::string& p : paths) inputs.push_back(gutf8::input::file(p));
  std::vector<file_outcome> out(paths.size());
  collector c(out, sink, progress);
  const gutf8::run_report r = gutf8::run(inputs, config, c);
  if (seconds) *seconds = r.seconds;
  return out;
}

}  // namespace gutf8_py
