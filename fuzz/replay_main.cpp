// Runs a libFuzzer target over files without libFuzzer, so that every build (not only the
// clang fuzz build) exercises the target on its seed corpus and past crash inputs.
//
//   build/bin/budget_headers_fuzz_replay fuzz/corpus/budget_headers [more files or dirs]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\nRuns the fuzz target once per input file.\n", argv[0]);
    return argc < 2 ? 2 : 0;
  }
  int failures = 0, runs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) failures += RunFile(f), ++runs;
    } else {
      failures += RunFile(p), ++runs;
    }
  }
  // Also the empty input, which corpora rarely hold.
  LLVMFuzzerTestOneInput(nullptr, 0);
  std::printf("%d inputs replayed, %d unreadable\n", runs + 1, failures);
  return failures == 0 ? 0 : 1;
}
