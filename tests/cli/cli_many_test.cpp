// Many inputs in one command (the input engine, SPEC §3c): outputs and reports byte-identical to
// running each input alone, in the order named, with unreadable inputs reported in their place;
// ten thousand inputs under a limit of 64 descriptors; SIGINT in the middle leaves no -o.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.hpp"
#include "gutf8/codec.hpp"

namespace gutf8::cli_test {
namespace {

class many : public cli {
 protected:
  // Inputs of every kind: big and small files, an empty one, a missing one, a directory, standard
  // input (a pipe), the same file twice.
  std::vector<std::string> mixed_inputs() {
    write("big", text_with_errors((5u << 20) + 3, 1));
    write("small", text_with_errors(777, 2));
    write("valid", "plain text\n");
    write("empty", "");
    write("cut", "abc\xE2\x82");
    std::filesystem::create_directory(dir_ / "folder");
    return {"big", "small", "missing", "valid", "-", "empty", "folder", "cut", "small"};
  }

  // What the inputs give one at a time, concatenated: the expected output of one run over them.
  result each_alone(const std::vector<std::string>& args, const std::vector<std::string>& inputs,
                    const std::string& stdin_text) {
    result all;
    all.status = 0;
    for (const std::string& in : inputs) {
      std::vector<std::string> a = args;
      a.push_back(in);
      const result r = in == "-" ? run_stdin(a, stdin_text) : run(a);
      all.out += r.out;
      all.err += r.err;
      all.status = std::max(all.status, r.status);
    }
    return all;
  }
};

TEST_F(many, EveryCommandEqualsEachInputAlone) {
  const std::vector<std::string> inputs = mixed_inputs();
  const std::string piped = text_with_errors(300001, 3);
  const std::vector<std::vector<std::string>> commands = {
      {"validate"}, {"validate", "--json"}, {"validate", "-l"}, {"validate", "-L"},
      {"validate", "--list-errors", "--max-errors", "3"}, {"stats"}, {"stats", "--json", "--top", "5"},
      {"decode", "--errors=replace", "-o", "-"}, {"decode", "--errors=drop", "--to", "utf-16le", "-o", "-"},
      {"validate", "--replace", "-o", "-"}, {"validate", "--drop", "-o", "-"}, {"decode", "-o", "-"}};
  for (const auto& args : commands)
    for (const char* threads : {"1", "3", "0"}) {
      std::string shown;
      for (const auto& a : args) shown += a + " ";
      SCOPED_TRACE(shown + "--threads " + threads);
      std::vector<std::string> a = args;
      a.insert(a.end(), {"--threads", threads});
      std::vector<std::string> all = a;
      all.insert(all.end(), inputs.begin(), inputs.end());
      const result got = run_stdin(all, piped);
      const result want = each_alone(a, inputs, piped);
      if (args[0] == "stats") {  // several inputs add a total (and text puts blank lines between)
        if (args.size() > 1 && args[1] == "--json") {
          EXPECT_TRUE(got.out.starts_with(want.out)) << got.out;
        }
        EXPECT_NE(got.out.find("total"), std::string::npos);
        EXPECT_EQ(got.status, want.status);
        EXPECT_EQ(got.err, want.err);
        continue;
      }
      EXPECT_EQ(got.status, want.status);
      EXPECT_TRUE(got.out == want.out) << "outputs differ: " << got.out.size() << " vs " << want.out.size() << " bytes";
      EXPECT_EQ(got.err, want.err);
    }
}

// Hundreds of small files under --backend=cuda, which the GPU lanes validate in batches: every
// report, name list and exit status is --backend=cpu's, which is each input's alone. The files mix
// valid and invalid text, empty files, sequences cut at a file's end whose next file would complete
// them, a BOM, and big files, more of them than a batch takes. Skips without a usable GPU.
TEST_F(many, SmallFilesUnderCudaEqualCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no usable GPU (gutf8::cuda_available() is false)";
  std::mt19937_64 g(44);
  std::vector<std::string> names;
  const auto add = [&](const std::string& text) {
    names.push_back("f" + std::to_string(names.size()));
    write(names.back(), text);
  };
  for (const char* t : {"\xF0\x9F\x98", "\x80 then text\n", "abc\xE2", "\x82\xAC", "", "\xEF\xBB\xBF" "BOM\n", "\xC3"})
    add(t);
  add(text_with_errors((5u << 20) + 3, 0));
  add(text_with_errors((2u << 20) + 1, 1));
  for (int k = 0; k < 300; ++k) {
    std::string t = k % 7 == 0 ? text_with_errors(200 + g() % 20000, k) : "clean " + std::to_string(k) + "\n" + std::string(g() % 20000, 'x');
    if (k % 23 == 0) t += "\xE2\x82";
    add(t);
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"validate"}, {"validate", "--json"}, {"validate", "-l"}, {"validate", "-L"}}) {
    SCOPED_TRACE(args.back());
    std::vector<std::string> cpu = args, cuda = args;
    cpu.push_back("--backend=cpu");
    cuda.push_back("--backend=cuda");
    cpu.insert(cpu.end(), names.begin(), names.end());
    cuda.insert(cuda.end(), names.begin(), names.end());
    const result want = run(cpu);
    const result got = run(cuda);
    EXPECT_EQ(want.status, 1);
    EXPECT_EQ(got.status, want.status) << got.err;
    EXPECT_EQ(got.err, want.err);
    EXPECT_TRUE(got.out == want.out) << "outputs differ: " << got.out.size() << " vs " << want.out.size() << " bytes";
  }
}

// Ten thousand small files under `ulimit -n 64`: every invalid one named, in order, none lost.
TEST_F(many, TenThousandFilesUnderSixtyFourDescriptors) {
  std::mt19937_64 g(7);
  std::string want;
  std::filesystem::create_directory(dir_ / "d");
  for (int k = 0; k < 10003; ++k) {
    const std::string name = "d/" + std::to_string(k);
    std::string text = text_with_errors(20 + g() % 300, k) + "\xFF";
    if (k % 3 != 0) text = "clean " + std::to_string(k) + "\n";
    write(name, text);
    if (k % 3 == 0) want += name + "\n";
  }
  const result r = shell("ulimit -n 64 && cd d && ls | sort -n | sed 's|^|d/|' > ../list && cd .. && "
                         "xargs -s 1900000 -a list \"$GUTF8\" validate -l --backend=cpu");
  EXPECT_EQ(r.status, 123) << r.err;  // xargs says 123 when gutf8 exits 1
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(r.out == want) << r.out.size() << " vs " << want.size() << " bytes of names";
}

// SIGINT while the run waits on its fifth input: no -o, no temporary.
TEST_F(many, SigintInTheMiddleLeavesNoOutput) {
  for (int k = 0; k < 4; ++k) write("f" + std::to_string(k), text_with_errors(100000, k));
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  const pid_t pid = spawn({"validate", "--replace", "f0", "f1", "f2", "f3", "fifo", "-o", "out"}, {});
  ASSERT_GT(pid, 0);
  const int fd = ::open((dir_ / "fifo").c_str(), O_WRONLY);  // waits for gutf8 to reach the FIFO
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abcd", 4), 4);
  bool temporary = false;  // the -o temporary is there while the run waits on the FIFO
  for (int i = 0; i < 200 && !temporary; ++i) {
    for (const std::string& name : listing()) temporary = temporary || name.starts_with(".out");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(temporary);
  ::kill(pid, SIGINT);
  const int status = wait_for(pid);
  ::close(fd);
  EXPECT_EQ(status, 128 + SIGINT);
  for (const std::string& name : listing()) EXPECT_FALSE(name == "out" || name.starts_with(".out")) << name;
}

}  // namespace
}  // namespace gutf8::cli_test
