// The op-sequence fuzz target (tests/fuzz/targets/op_sequence.cpp) as a
// deterministic test: every corpus file, a fixed number of seeded random
// inputs, and one regression input per finding fixed. A finding traps (the
// decoded program is printed to stderr), so the test fails by crashing.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
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
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kDefaultPrograms = 4000;  // about 8 s of CPU under ASan + UBSan
#else
  constexpr int kDefaultPrograms = 10000;  // about 1.5 s of CPU in release
#endif
  const int kPrograms = count != nullptr ? std::atoi(count) : kDefaultPrograms;
  const opseq::Stats before = opseq::stats();
  std::mt19937_64 gen(seed != nullptr ? std::strtoull(seed, nullptr, 10) : 19);
  for (int i = 0; i < kPrograms; ++i) {
    std::vector<std::uint8_t> bytes(16 + gen() % 200);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(gen());
    run_bytes(bytes);
  }
  const opseq::Stats& after = opseq::stats();
  std::printf(
      "%d programs: %llu ran in every tier, %llu were one typed error, %llu AD checks, "
      "%llu skipped as the open svdvals/eigvalsh finding\n",
      kPrograms, static_cast<unsigned long long>(after.ok - before.ok),
      static_cast<unsigned long long>(after.typed_errors - before.typed_errors),
      static_cast<unsigned long long>(after.ad_checks - before.ad_checks),
      static_cast<unsigned long long>(after.known_issue - before.known_issue));
  EXPECT_EQ(after.executions - before.executions, static_cast<std::uint64_t>(kPrograms));
  // The table is exercised: many programs run through, some check AD, every
  // op kind runs in a complete program somewhere.
  EXPECT_GT(after.ok - before.ok, kPrograms / 5u);
  EXPECT_GT(after.typed_errors - before.typed_errors, kPrograms / 10u);
  EXPECT_GT(after.ad_checks - before.ad_checks, kPrograms / 20u);
  for (int k = 0; k < opseq::kOpKinds; ++k)
    EXPECT_GT(after.ops_ok[k] - before.ops_ok[k], 0u) << "op kind " << k;
}

// One input per finding fixed in the library, decoded as the comment says
// (bytes: input count, then per input dtype/rank/extents/layout/seed/
// special/huge, op count, AD seed, then per op its kind and 24 parameter
// bytes; missing bytes read as 0).
TEST(OpSequence, RegressionsOfFixedFindings) {
  const std::vector<std::vector<std::uint8_t>> cases = {
      // stack(f64[2, 3], f64[3], 2): eager and traced inserted the new axis
      // past the end of the rank-1 shape (SIGSEGV); RankMismatch now.
      {1, 2, 2, 2, 3, 0, 0, 0, 0, 2, 1, 3, 0, 0, 0, 0, 0, 0, 19, 0, 1, 0, 2},
      // matmul(bool[], f64[2]): DTypeMismatch directly, RankMismatch eagerly.
      {1, 14, 0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0},
      // div(f32[2], f32[2^62] broadcast): the traced placeholder accepted a
      // shape no tensor can have and failed later with ShapeMismatch.
      {1, 0, 1, 2, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 255, 0, 0, 1, 0, 1, 0, 3},
      // broadcast_to(c64[3, 0], [2^62, 3]): size before compatibility.
      {0, 6, 2, 3, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 249, 1, 1, 0},
      // reshape(f32[2], [2^62, 4]): a wrapped element count (ShapeMismatch,
      // "0 elements") directly and eagerly, InvalidArgument traced.
      {0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 13, 0, 0, 0, 5, 2, 249, 5},
      // slice(f64[3], [0], [2], [INT64_MAX]): traced inferred extent -1; the
      // AD check then runs the slice transpose rule at that stride.
      {0, 2, 1, 3, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 2, 250},
      // einsum("m,ij->j", f32[], c128[3, 1]): eager DTypeMismatch (its plan
      // cache checked dtypes first), RankMismatch in the other tiers.
      {1, 9, 2, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 34, 1, 0, 0, 1, 250, 0, 1, 0, 1, 2},
      // irfft(c64[1], n = 2^59 + 1): OutOfMemory from the zero padding
      // directly and eagerly, InvalidArgument traced.
      {0, 6, 1, 1, 0, 0, 0, 0, 0, 0, 35, 0, 0, 0, 3, 1, 255, 0, 0, 0},
      // matmul(f32[4], permute(i64[2^40, 0, 0], {1, 2, 0})): the eager tier
      // broadcast f32[1, 4] over the 2^40 batch (OutOfMemory) before it saw
      // the inner extents 4 and 0 disagree (ShapeMismatch directly).
      {1, 0, 1, 4, 0, 0, 0, 0, 13, 3, 0, 0, 0, 0, 0, 0, 250, 1, 0, 11, 1, 0, 0, 1,
       0, 0, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0,   0, 0, 0,  9, 0, 2, 0},
      // pow(f64[2], bool[2]): its derivative subtracted 1 from the bool
      // exponent (DTypeMismatch in jvp, vjp and grad of both AD tiers).
      {1, 2, 1, 2, 0, 0, 0, 0, 14, 1, 2, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 4},
      // diagonal(c128[1, 4], offset 2^59 + 1): empty, but its transpose rule
      // built a [2^59 + 1, 2^59 + 1] block (InvalidArgument in AD).
      {0, 9, 2, 1, 4, 0, 0, 0, 0, 0, 0, 21, 0, 0, 0, 255, 0, 1},
      // solve(diag_embed(c128[2], 1), bool[0]): a singular A was factorised
      // first directly and eagerly (Singular), traced saw B (DTypeMismatch).
      {1, 9, 1, 2, 0, 0, 0, 0, 14, 1, 0, 0, 0, 0, 0, 1, 0, 22, 0,  0, 0, 3, 0, 0,
       0, 0, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0, 0,  36, 2, 1, 0, 5},
      // kron(i32[2^40, 0], same): the direct tier multiplied the extents
      // 2^40 * 2^40 unchecked (UBSan: signed overflow); InvalidArgument now.
      {0, 12, 2, 1, 0, 0, 0, 0, 250, 0, 0, 30, 0, 0, 0},
  };
  const opseq::Stats before = opseq::stats();
  for (const auto& bytes : cases) run_bytes(bytes);
  const opseq::Stats& after = opseq::stats();
  EXPECT_EQ(after.executions - before.executions, cases.size());
  // The slice, pow and diagonal cases run through (with their AD checks);
  // the others are typed errors of one kind in every tier.
  EXPECT_EQ(after.ok - before.ok, 3u);
  EXPECT_EQ(after.ad_checks - before.ad_checks, 3u);
  EXPECT_EQ(after.typed_errors - before.typed_errors, cases.size() - 3);
}
