// tenferro-oracle-replay: replays the AD oracle cases (PyTorch references
// cross-checked by finite differences) against tenferro's eager and traced
// tiers. See docs/operators.md and docs/oracle-exceptions.md.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>

#include "checks.hpp"
#include "ops.hpp"

namespace {

using namespace replay;

struct Options {
  std::string cases = "../shared/oracles/cases";
  std::string mode = "both";
  std::string only;
  std::string report;
  bool verbose = false;
  bool strict = false;  // a case of an op without a mapping fails instead of being skipped
};

void usage(std::ostream& os) {
  os << "usage: tenferro-oracle-replay [--cases DIR] [--mode eager|traced|both] [--only REGEX]\n"
        "                              [--report FILE.json] [--strict] [--verbose]\n"
        "  --cases DIR    oracle cases (<op>/<family>.jsonl), default ../shared/oracles/cases\n"
        "  --mode M       tiers to check, default both\n"
        "  --only REGEX   only cases whose op/family matches (ECMAScript regex, searched)\n"
        "  --report FILE  writes {cases: [...], summary: {passed, failed, skipped}}\n"
        "  --strict       only documented exceptions may be skipped; a case of any\n"
        "                 unmapped op (linear algebra included) fails\n"
        "Ends with one line 'N passed, M failed, K skipped'; exit status 1 when a case failed.\n";
}

// Returns false (after printing why) for bad arguments.
bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) {
        std::cerr << "tenferro-oracle-replay: " << a << " needs a value\n";
        return false;
      }
      dst = argv[++i];
      return true;
    };
    if (a == "--cases") {
      if (!value(o.cases)) return false;
    } else if (a == "--mode") {
      if (!value(o.mode)) return false;
      if (o.mode != "eager" && o.mode != "traced" && o.mode != "both") {
        std::cerr << "tenferro-oracle-replay: --mode must be eager, traced or both\n";
        return false;
      }
    } else if (a == "--only") {
      if (!value(o.only)) return false;
    } else if (a == "--report") {
      if (!value(o.report)) return false;
    } else if (a == "--strict") {
      o.strict = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--help" || a == "-h") {
      usage(std::cout);
      std::exit(0);
    } else {
      std::cerr << "tenferro-oracle-replay: unknown argument '" << a << "'\n";
      usage(std::cerr);
      return false;
    }
  }
  return true;
}

std::string describe(const Failure& f) {
  char buf[160];
  std::snprintf(buf, sizeof buf, " max_abs=%.3g max_rel=%.3g", f.max_abs, f.max_rel);
  std::string s = f.mode + " " + f.probe + " " + f.check;
  if (!f.note.empty()) return s + ": " + f.note;
  return s + buf;
}

struct OpTally {
  long total_checks = 0;
  int passed = 0, failed = 0, skipped = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) return 2;
  std::regex only;
  try {
    if (!opt.only.empty()) only = std::regex(opt.only);
  } catch (const std::regex_error& e) {
    std::cerr << "tenferro-oracle-replay: bad --only regex: " << e.what() << "\n";
    return 2;
  }

  std::vector<std::string> load_errors;
  std::vector<Case> cases;
  try {
    cases = load_cases(opt.cases, load_errors);
  } catch (const std::exception& e) {
    std::cerr << "tenferro-oracle-replay: " << e.what() << "\n";
    return 2;
  }
  for (const auto& e : load_errors) std::cerr << "malformed case: " << e << "\n";

  const auto start = std::chrono::steady_clock::now();
  auto rt = tenferro::EagerRuntime::make_cpu({.num_threads = 1});
  const bool eager = opt.mode != "traced", traced = opt.mode != "eager";

  Json report_cases = Json::array();
  std::map<std::string, OpTally> per_op;
  std::map<std::string, std::set<std::string>> skipped_ops;  // reason -> ops
  long total_checks = 0;
  int passed = 0, failed = 0, skipped = static_cast<int>(load_errors.size());
  failed += static_cast<int>(load_errors.size());
  skipped -= static_cast<int>(load_errors.size());

  for (const Case& c : cases) {
    const std::string key = c.op + "/" + c.family;
    if (!opt.only.empty() && !std::regex_search(key, only)) continue;
    const Classification cls = classify(c);
    std::string status, detail;
    if ((cls.support == Support::Unknown || cls.support == Support::Linalg) && opt.strict) {
      status = "failed";
      detail = cls.reason + " (--strict)";
      std::cout << "FAIL " << c.op << " " << c.case_id << " " << detail << "\n";
    } else if (cls.support != Support::Ok) {
      status = "skipped";
      detail = cls.reason;
      skipped_ops[cls.support == Support::Linalg      ? "linear algebra without a mapping"
                  : cls.support == Support::Exception ? "documented exception"
                                                      : "not implemented"]
          .insert(c.op);
    } else {
      std::vector<Failure> failures;
      const auto run_mode = [&](const char* mode, auto&& check) {
        try {
          ModeResult m = check(c, rt);
          total_checks += m.checks;
          failures.insert(failures.end(), m.failures.begin(), m.failures.end());
        } catch (const std::exception& e) {
          failures.push_back({mode, "-", "run", 0, 0, std::string("threw: ") + e.what()});
        }
      };
      if (eager) run_mode("eager", check_eager);
      if (traced) run_mode("traced", check_traced);
      status = failures.empty() ? "passed" : "failed";
      for (std::size_t i = 0; i < failures.size(); ++i) {
        if (!detail.empty()) detail += "; ";
        detail += describe(failures[i]);
      }
      if (!failures.empty()) {
        std::cout << "FAIL " << c.op << " " << c.case_id << " " << describe(failures.front());
        if (failures.size() > 1) std::cout << " (+" << failures.size() - 1 << " more)";
        std::cout << "\n";
        if (opt.verbose) {
          for (std::size_t i = 1; i < failures.size(); ++i) {
            std::cout << "     " << describe(failures[i]) << "\n";
          }
        }
      }
    }
    OpTally& t = per_op[c.op];
    if (status == "passed") {
      ++passed;
      ++t.passed;
    } else if (status == "failed") {
      ++failed;
      ++t.failed;
    } else {
      ++skipped;
      ++t.skipped;
    }
    report_cases.push_back({{"case_id", c.case_id},
                            {"op", c.op},
                            {"family", c.family},
                            {"dtype", c.dtype},
                            {"status", status},
                            {"detail", detail}});
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << "\nper op (passed/failed/skipped):\n";
  int col = 0;
  for (const auto& [op, t] : per_op) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "  %-34s %3d/%d/%d", op.c_str(), t.passed, t.failed, t.skipped);
    std::cout << buf << (++col % 2 == 0 ? "\n" : "");
  }
  if (col % 2) std::cout << "\n";
  for (const auto& [reason, ops] : skipped_ops) {
    std::cout << "skipped, " << reason << ":";
    for (const auto& op : ops) std::cout << " " << op;
    std::cout << "\n";
  }
  std::printf("mode %s: %ld comparisons in %.1f s\n", opt.mode.c_str(), total_checks, seconds);

  if (!opt.report.empty()) {
    Json rep = {{"cases", report_cases},
                {"summary", {{"passed", passed}, {"failed", failed}, {"skipped", skipped}}}};
    std::ofstream out(opt.report);
    if (!out) {
      std::cerr << "tenferro-oracle-replay: cannot write " << opt.report << "\n";
      return 2;
    }
    out << rep.dump(1) << "\n";
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped" << std::endl;
  return failed > 0 ? 1 : 0;
}
