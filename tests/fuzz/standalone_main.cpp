// A deterministic stand-in for libFuzzer's driver, for compilers without it
// (GCC): runs LLVMFuzzerTestOneInput on every corpus file, then on N mutants
// of them (bit flips, byte inserts and erases, chunk copies, splices of two
// files, interesting integers in binary and decimal form) drawn with a fixed
// seed, so a CTest run is reproducible. No coverage feedback: it finds what
// the corpus neighbourhood holds, under whatever sanitizers the build has.
//
//   fuzz_<name> [--runs N] [--seed S] [--max-len L] CORPUS_DIR_OR_FILE...
//
// A crash, a sanitizer report or an exception escaping the target leaves the
// input in ./fuzz-finding-<run> (or $TENFERRO_FUZZ_FINDINGS/...) for replay:
// `fuzz_<name> --runs 0 FILE` runs that file alone.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Present when the build has AddressSanitizer (weak: absent otherwise).
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

// The input being run, saved when the process dies on it.
const Bytes* g_current = nullptr;
std::string g_label;  // "<run>" for a mutant, "corpus-<file>" for a corpus input

void save_current() {
  if (g_current == nullptr) return;
  const char* dir = std::getenv("TENFERRO_FUZZ_FINDINGS");
  const fs::path path = fs::path(dir != nullptr ? dir : ".") / ("fuzz-finding-" + g_label);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(g_current->data()),
            static_cast<std::streamsize>(g_current->size()));
  std::fprintf(stderr, "fuzz: the input %s (%zu bytes) is saved in %s\n", g_label.c_str(),
               g_current->size(), path.c_str());
}

void on_terminate() {
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "fuzz: FINDING: an exception escaped the target: %s\n", ex.what());
    } catch (...) {
      std::fprintf(stderr, "fuzz: FINDING: an exception of unknown type escaped the target\n");
    }
  }
  save_current();
  std::abort();
}

// Without AddressSanitizer nobody reports a crash: save the input, then die
// of the signal. On an alternate stack, so a stack overflow is caught too.
void on_fatal_signal(int sig) {
  static const char msg[] = "fuzz: FINDING: fatal signal\n";
  (void)!write(2, msg, sizeof msg - 1);
  save_current();  // not async-signal-safe; good enough for a dying process
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_signal_handlers() {
  static std::vector<char> alt_stack(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

Bytes read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Boundary values that parsers mishandle: sizes around powers of two, sign
// flips, the ends of the integer types.
constexpr std::array<std::int64_t, 20> kInteresting = {0,
                                                       1,
                                                       -1,
                                                       2,
                                                       3,
                                                       7,
                                                       8,
                                                       16,
                                                       127,
                                                       128,
                                                       255,
                                                       256,
                                                       0x7fff,
                                                       0xffff,
                                                       0x10000,
                                                       0x7fffffff,
                                                       -0x80000000LL,
                                                       0xffffffffLL,
                                                       0x7fffffffffffffffLL,
                                                       -0x7fffffffffffffffLL - 1};

class Mutator {
 public:
  Mutator(std::uint64_t seed, std::size_t max_len) : rng_(seed), max_len_(max_len) {}

  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }

  Bytes mutate(const std::vector<Bytes>& corpus) {
    Bytes b = corpus[below(corpus.size())];
    const std::size_t steps = 1 + below(4);
    for (std::size_t s = 0; s < steps; ++s) step(b, corpus);
    if (b.size() > max_len_) b.resize(max_len_);
    return b;
  }

 private:
  void step(Bytes& b, const std::vector<Bytes>& corpus) {
    switch (below(b.empty() ? 3 : 9)) {
      case 0: {  // insert random bytes
        const std::size_t at = below(b.size() + 1), n = 1 + below(4);
        for (std::size_t k = 0; k < n; ++k) b.insert(b.begin() + at, rand_byte());
        break;
      }
      case 1: {  // splice: a prefix of this input, a suffix of another
        const Bytes& o = corpus[below(corpus.size())];
        const std::size_t cut = below(b.size() + 1), from = below(o.size() + 1);
        b.resize(cut);
        b.insert(b.end(), o.begin() + static_cast<std::ptrdiff_t>(from), o.end());
        break;
      }
      case 2: {  // an interesting integer as decimal text
        const std::string t = std::to_string(kInteresting[below(kInteresting.size())]);
        const std::size_t at = below(b.size() + 1);
        b.insert(b.begin() + at, t.begin(), t.end());
        break;
      }
      case 3:  // flip one bit
        b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8));
        break;
      case 4:  // overwrite a byte
        b[below(b.size())] = rand_byte();
        break;
      case 5: {  // erase a run
        const std::size_t at = below(b.size()), n = 1 + below(std::min<std::size_t>(8, b.size()));
        b.erase(b.begin() + at, b.begin() + std::min(b.size(), at + n));
        break;
      }
      case 6: {  // an interesting integer in little-endian binary (1, 2, 4 or 8 bytes)
        const std::size_t width = std::size_t{1} << below(4);
        if (b.size() < width) break;
        const auto v = static_cast<std::uint64_t>(kInteresting[below(kInteresting.size())]);
        const std::size_t at = below(b.size() - width + 1);
        for (std::size_t k = 0; k < width; ++k) b[at + k] = static_cast<std::uint8_t>(v >> (8 * k));
        break;
      }
      case 7: {  // duplicate a chunk (repeated terms, nested brackets)
        const std::size_t at = below(b.size()), n = 1 + below(std::min<std::size_t>(16, b.size()));
        const Bytes chunk(b.begin() + at, b.begin() + std::min(b.size(), at + n));
        b.insert(b.begin() + below(b.size() + 1), chunk.begin(), chunk.end());
        break;
      }
      default:  // truncate
        b.resize(below(b.size()));
        break;
    }
  }
  std::uint8_t rand_byte() { return static_cast<std::uint8_t>(rng_()); }

  std::mt19937_64 rng_;
  std::size_t max_len_;
};

int usage() {
  std::cerr << "usage: fuzz_<name> [--runs N] [--seed S] [--max-len L] CORPUS_DIR_OR_FILE...\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long long runs = 1000;
  std::uint64_t seed = 1;
  std::size_t max_len = 4096;
  std::vector<fs::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--runs" || a == "--seed" || a == "--max-len") && i + 1 < argc) {
      const char* v = argv[++i];
      if (a == "--runs") runs = std::atoll(v);
      if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
      if (a == "--max-len") max_len = std::strtoull(v, nullptr, 10);
    } else if (a.rfind("--", 0) == 0) {
      return usage();
    } else {
      paths.emplace_back(a);
    }
  }
  std::vector<fs::path> files;
  for (const fs::path& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::cerr << "fuzz: " << p << " is neither a file nor a directory\n";
      return 2;
    }
  }
  std::sort(files.begin(), files.end());  // directory order is not deterministic
  std::vector<Bytes> corpus;
  for (const fs::path& f : files) corpus.push_back(read_bytes(f));
  if (corpus.empty()) corpus.emplace_back();

  std::set_terminate(on_terminate);
  if (__sanitizer_set_death_callback != nullptr) {
    __sanitizer_set_death_callback(save_current);
  } else {
    install_signal_handlers();
  }

  long long executed = 0;
  for (std::size_t k = 0; k < corpus.size(); ++k) {
    const Bytes& b = corpus[k];
    g_label = "corpus-" + (k < files.size() ? files[k].filename().string() : std::string("empty"));
    g_current = &b;
    LLVMFuzzerTestOneInput(b.data(), b.size());
    ++executed;
  }
  Mutator mutator(seed, max_len);
  for (long long r = 0; r < runs; ++r) {
    const Bytes b = mutator.mutate(corpus);
    g_current = &b;
    g_label = std::to_string(r);
    LLVMFuzzerTestOneInput(b.data(), b.size());
    ++executed;
  }
  g_current = nullptr;
  std::cout << "fuzz: " << executed << " executions (" << corpus.size() << " corpus inputs, "
            << runs << " mutants, seed " << seed << "), no finding\n";
  return 0;
}
