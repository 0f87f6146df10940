// The op-sequence fuzz target (tests/fuzz/targets/op_sequence.cpp) as a
// deterministic test: every corpus file, a fixed number of seeded random
// inputs, and one regression input per finding fixed. A finding traps (the
// decoded program is printed to stderr), so the test fails by crashing.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "fuzz/targets/op_sequence.cpp"

namespace {

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void run_bytes(const std::vector<std::uint8_t>& bytes) {
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

}  // namespace

TEST(OpSequence, Corpus) {
  const std::filesystem::path dir = TENFERRO_FUZZ_CORPUS "/op_sequence";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) run_bytes(read_file(f));
  EXPECT_GE(files.size(), 10u);
}

TEST(OpSequence, SeededRandomPrograms) {
  // Release runs these in a few seconds, the sanitizer build in under 30 s.
  // OPSEQ_PROGRAMS and OPSEQ_SEED run a longer campaign by hand.
  const char* count = std::getenv("OPSEQ_PROGRAMS");
  const char* seed = std::getenv("OPSEQ_SEED");
  const int kPrograms = count != nullptr ? std::atoi(count) : 10000;
  const opseq::Stats before = opseq::stats();
  std::mt19937_64 gen(seed != nullptr ? std::strtoull(seed, nullptr, 10) : 19);
  for (int i = 0; i < kPrograms; ++i) {
    std::vector<std::uint8_t> bytes(16 + gen() % 200);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(gen());
    run_bytes(bytes);
  }
  const opseq::Stats& after = opseq::stats();
  EXPECT_EQ(after.executions - before.executions, static_cast<std::uint64_t>(kPrograms));
  // The table is exercised: many programs run through, some check AD, every
  // op kind runs in a complete program somewhere.
  EXPECT_GT(after.ok - before.ok, kPrograms / 5u);
  EXPECT_GT(after.typed_errors - before.typed_errors, kPrograms / 10u);
  EXPECT_GT(after.ad_checks - before.ad_checks, kPrograms / 20u);
  for (int k = 0; k < opseq::kOpKinds; ++k)
    EXPECT_GT(after.ops_ok[k] - before.ops_ok[k], 0u) << "op kind " << k;
}
