#include "cli_runner.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <iterator>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gutf8::cli_test {

std::string gutf8_binary() {
  if (const char* bin = std::getenv("GUTF8_BIN"); bin && *bin) return bin;
  return GUTF8_BINARY_DIR "/gutf8";
}

// About n bytes of UTF-8 with every sequence length and some invalid bytes.
std::string text_with_errors(std::size_t n, std::uint64_t seed) {
  static constexpr std::string_view fragments[] = {"plain ascii text ", "\xC3\xA9t\xC3\xA9 ", "\xE4\xB8\xAD\xE6\x96\x87",
                                                   "\xF0\x9F\x98\x80", "\n", "\xFF", "\xE2\x82", "\xED\xA0\x80"};
  std::mt19937_64 rng(seed);
  std::string s;
  s.reserve(n + 32);
  while (s.size() < n) s += fragments[rng() % 5 == 0 ? 5 + rng() % 3 : rng() % 5];
  return s;
}

std::string utf32le(std::u32string_view text) {
  std::string bytes;
  for (const char32_t c : text)
    for (int shift = 0; shift < 32; shift += 8) bytes += static_cast<char>((c >> shift) & 0xFF);
  return bytes;
}

void cli::SetUp() {
  std::string pattern = (fs::temp_directory_path() / "gutf8-cli-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
  dir_ = fs::canonical(pattern);
  captured_out_ = (dir_ / ".stdout").string();
  captured_err_ = (dir_ / ".stderr").string();
}

void cli::TearDown() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

pid_t cli::start(std::vector<std::string> argv_strings, const redirect& io) {
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, io.stdin_path.c_str(), O_RDONLY, 0);
  const std::string& out = io.stdout_path.empty() ? captured_out_ : io.stdout_path;
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, captured_err_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, dir_.c_str());
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << argv[0] << ": " << std::strerror(rc);
  return rc == 0 ? pid : -1;
}

std::string test_backend() {
  const char* b = std::getenv("GUTF8_TEST_BACKEND");
  return b && *b ? b : "cpu";
}

std::vector<std::string> with_test_backend(std::vector<std::string> args) {
  static constexpr std::string_view commands[] = {"decode", "encode", "validate", "stats"};
  if (args.empty() || std::find(std::begin(commands), std::end(commands), args[0]) == std::end(commands))
    return args;
  for (const std::string& a : args)
    if (a.starts_with("--backend") || a == "--help" || a == "-h" || a == "--version") return args;
  args.insert(args.begin() + 1, "--backend=" + test_backend());
  return args;
}

pid_t cli::spawn(const std::vector<std::string>& args, const redirect& io) {
  std::vector<std::string> argv{gutf8_binary()};
  const std::vector<std::string> full = with_test_backend(args);
  argv.insert(argv.end(), full.begin(), full.end());
  return start(std::move(argv), io);
}

int cli::wait_for(pid_t pid, long* max_rss_kib) {
  if (pid < 0) return -1;
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0)
    if (errno != EINTR) return -1;
  if (max_rss_kib != nullptr) *max_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

result cli::collect(pid_t pid) {
  result r;
  r.status = wait_for(pid, &r.max_rss_kib);
  r.out = read(".stdout");
  r.err = read(".stderr");
  std::error_code ignored;
  fs::remove(captured_out_, ignored);
  fs::remove(captured_err_, ignored);
  return r;
}

result cli::run(const std::vector<std::string>& args, const redirect& io) {
  return collect(spawn(args, io));
}

result cli::run_stdin(const std::vector<std::string>& args, std::string_view input) {
  const std::string in = write(".stdin", input);
  result r = run(args, redirect{(dir_ / in).string(), {}});
  fs::remove(dir_ / in);
  return r;
}

result cli::shell(const std::string& script) {
  const std::string file = write(".script", "GUTF8='" + gutf8_binary() + "'\n" + script + '\n');
  result r = collect(start({"/bin/sh", file}, {}));
  fs::remove(dir_ / file);
  return r;
}

std::string cli::write(const std::string& name, std::string_view bytes) {
  std::ofstream(dir_ / name, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return name;
}

std::string cli::read(const std::string& name) const {
  std::ifstream in(dir_ / name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> cli::listing() const {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gutf8::cli_test
