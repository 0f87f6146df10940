#pragma once
// Timing protocol and output format shared by our benchmark binary and the
// libtorch peer (header-only, no tenferro dependency), so both sides measure
// the same way. See docs/performance.md for the protocol.
//
// Every case prints one JSON line:
//   {"case":..,"size":..,"impl":..,"variant":..,"threads":n,
//    "median_ns":..,"iqr_ns":..,"check":[sum, probe0..probe4]}
// `check` holds the sum of the result and the values at five flat positions of
// its memory; every side lays its data out so that these memories coincide
// (peers use the row-major array with reversed shape = our column-major bytes).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace bench {

struct Options {
  int threads = 1;
  bool smoke = false;              // each case once, no timing
  bool quick = false;              // shorter samples
  std::vector<std::string> cases;  // empty: all
};

inline Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--smoke") {
      o.smoke = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--threads" && i + 1 < argc) {
      o.threads = std::atoi(argv[++i]);
    } else if (a == "--cases" && i + 1 < argc) {
      std::string list = argv[++i];
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) o.cases.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--smoke] [--quick] [--threads N] [--cases id,id,...]\n",
                   argv[0]);
      std::exit(2);
    }
  }
  if (o.threads < 1) o.threads = 1;
  return o;
}

/// The case id the driver selects with: "case/size/variant".
inline std::string case_id(const std::string& name, const std::string& size,
                           const std::string& variant) {
  return name + "/" + size + "/" + variant;
}

inline bool selected(const Options& o, const std::string& id) {
  return o.cases.empty() || std::find(o.cases.begin(), o.cases.end(), id) != o.cases.end();
}

/// Deterministic input values, exactly reproducible in every language:
/// element k of input number `off` (linear memory index).
inline double input_value(std::int64_t k, std::int64_t off) {
  return static_cast<double>(((k + off * 1000003) * 7919) % 10007) / 10007.0 - 0.5;
}

inline std::vector<double> input_vector(std::int64_t n, std::int64_t off) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) v[static_cast<std::size_t>(k)] = input_value(k, off);
  return v;
}

/// Group 15 (special functions and activations): each case's input domain.
/// Element k is scale * input_value(k, off) + shift, computed in that order on
/// every side (peers.py has the same table); logaddexp also takes input 2.
struct DomainCase {
  const char* name;
  double scale;
  double shift;
};
inline constexpr DomainCase kSpecialDomains[] = {
    {"lgamma", 20.0, 10.25},   // (0.25, 20.25)
    {"digamma", 20.0, 10.25},  // (0.25, 20.25)
    {"erfinv", 1.98, 0.0},     // (-0.99, 0.99)
    {"i0e", 40.0, 0.0},        // (-20, 20)
    {"log_ndtr", 20.0, 0.0},   // (-10, 10): both tails
    {"softplus", 20.0, 0.0},   // (-10, 10), below the threshold 20
    {"silu", 20.0, 0.0},      {"logsigmoid", 20.0, 0.0}, {"logaddexp", 20.0, 0.0},
};

inline std::vector<double> domain_vector(const std::string& name, std::int64_t n,
                                         std::int64_t off) {
  for (const DomainCase& c : kSpecialDomains) {
    if (name == c.name) {
      std::vector<double> v = input_vector(n, off);
      for (double& x : v) x = c.scale * x + c.shift;
      return v;
    }
  }
  std::fprintf(stderr, "domain_vector: no domain for case %s\n", name.c_str());
  std::exit(2);
}

/// The flat positions probed in every result: evenly spread, first and last.
inline std::vector<std::int64_t> probe_positions(std::int64_t n) {
  std::vector<std::int64_t> q;
  if (n <= 0) return q;
  for (int p = 0; p <= 4; ++p) q.push_back((n - 1) * p / 4);
  return q;
}

/// [sum, values at probe_positions] of a compact result.
inline std::vector<double> make_check(const double* mem, std::int64_t n) {
  std::vector<double> c{0.0};
  for (std::int64_t i = 0; i < n; ++i) c[0] += mem[i];
  for (std::int64_t q : probe_positions(n)) c.push_back(mem[q]);
  return c;
}

struct Stats {
  double median_ns = 0;
  double iqr_ns = 0;
};

inline double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

/// A call at least this long makes a slow case (fewer samples); peers.py
/// uses the same threshold.
constexpr double kSlowCallNs = 1e9;

/// Times fn (one call = one unit of the case). Warm-up first; calls are
/// batched so that one sample lasts at least a few milliseconds; the result
/// is per call, median and interquartile range over the samples.
inline Stats measure(const Options& o, const std::function<void()>& fn) {
  using clock = std::chrono::steady_clock;
  if (o.smoke) {
    fn();
    return {};
  }
  const double target_ns = o.quick ? 2e6 : 10e6;
  fn();  // warm-up: first-touch pages, pools, BLAS buffers
  auto t0 = clock::now();
  fn();
  double one = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count());
  // A call of a second or more (the MERA network) is a long sample by itself:
  // such a case takes no further warm-up and 3 samples (5 without --quick).
  const bool slow = one >= kSlowCallNs;
  const int samples = slow ? (o.quick ? 3 : 5) : (o.quick ? 7 : 11);
  const std::int64_t batch =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(target_ns / std::max(one, 1.0)));
  // More warm-up: calls until 30 ms (100 ms without --quick) have passed (at most 64 calls), so
  // slow cases too run on memory the process has touched before (freshly
  // mapped pages stay slow for the first few passes on some virtual machines).
  const double warmup_ns = o.quick ? 30e6 : 100e6;
  auto w0 = clock::now();
  for (int c = 0; c < (slow ? 0 : 64); ++c) {
    const auto spent = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - w0);
    if (static_cast<double>(spent.count()) >= warmup_ns) break;
    fn();
  }
  std::vector<double> per_call;
  for (int s = 0; s < samples; ++s) {
    t0 = clock::now();
    for (std::int64_t b = 0; b < batch; ++b) fn();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count();
    per_call.push_back(static_cast<double>(ns) / static_cast<double>(batch));
  }
  return {quantile(per_call, 0.5), quantile(per_call, 0.75) - quantile(per_call, 0.25)};
}

inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// Prints the JSON line of one case (per_unit divides the time, e.g. 1000
/// adds per call give the time per add).
inline void emit(const char* impl, const std::string& name, const std::string& size,
                 const std::string& variant, int threads, Stats st,
                 const std::vector<double>& check, double per_unit = 1.0) {
  std::string line = "{\"case\":\"" + name + "\",\"size\":\"" + size + "\",\"impl\":\"" + impl +
                     "\",\"variant\":\"" + variant + "\",\"threads\":" + std::to_string(threads) +
                     ",\"median_ns\":" + json_number(st.median_ns / per_unit) +
                     ",\"iqr_ns\":" + json_number(st.iqr_ns / per_unit) + ",\"check\":[";
  for (std::size_t i = 0; i < check.size(); ++i) {
    if (i) line += ",";
    line += json_number(check[i]);
  }
  line += "]}\n";
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

/// Peer-side layout of our column-major shape: reversed shape, row-major.
inline std::vector<std::int64_t> reversed(std::vector<std::int64_t> shape) {
  std::reverse(shape.begin(), shape.end());
  return shape;
}

/// Our permutation `perm` expressed on the reversed (row-major) layout.
inline std::vector<std::int64_t> peer_perm(const std::vector<std::int64_t>& perm) {
  const auto r = static_cast<std::int64_t>(perm.size());
  std::vector<std::int64_t> q(perm.size());
  for (std::int64_t i = 0; i < r; ++i) q[i] = r - 1 - perm[r - 1 - i];
  return q;
}

}  // namespace bench
