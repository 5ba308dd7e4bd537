// A main for a fuzz target without libFuzzer: runs every input of the given files and folders
// (folders in name order) through LLVMFuzzerTestOneInput once, as `fuzzer -runs=0 DIR` would.
// The tests use it to replay the committed corpora with gcc, in the plain and the ASan + UBSan
// builds, so that every past finding stays a regression check and the targets keep compiling
// where there is no clang. A crash or sanitizer report ends the run; the line before it names
// the input. `--max-seconds S` fails the run when one input takes longer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputsOf(const std::vector<std::string>& args) {
  std::vector<fs::path> inputs;
  for (const auto& a : args) {
    if (!fs::is_directory(a)) {
      inputs.emplace_back(a);
      continue;
    }
    std::vector<fs::path> here;
    for (const auto& e : fs::directory_iterator(a))
      if (e.is_regular_file()) here.push_back(e.path());
    std::sort(here.begin(), here.end());
    inputs.insert(inputs.end(), here.begin(), here.end());
  }
  return inputs;
}

bool readAll(const fs::path& p, std::vector<std::uint8_t>& bytes) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double max_seconds = 0;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--max-seconds" && i + 1 < argc)
      max_seconds = std::strtod(argv[++i], nullptr);
    else
      args.push_back(a);
  }
  const auto inputs = inputsOf(args);
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s [--max-seconds S] FILE|DIR...: no inputs found\n", argv[0]);
    return 2;
  }
  double slowest = 0;
  std::string slowest_name;
  std::vector<std::uint8_t> bytes;
  for (const auto& p : inputs) {
    if (!readAll(p, bytes)) {
      std::fprintf(stderr, "cannot read %s\n", p.c_str());
      return 2;
    }
    std::printf("%s\n", p.c_str());
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > slowest) {
      slowest = s;
      slowest_name = p.string();
    }
  }
  std::printf("ran %zu inputs; slowest %.3f s (%s)\n", inputs.size(), slowest, slowest_name.c_str());
  if (max_seconds > 0 && slowest > max_seconds) {
    std::printf("FAIL: an input took longer than %.1f s\n", max_seconds);
    return 1;
  }
  return 0;
}
