// FFTW's process-wide planner state, behind the family's planner mutex: thread
// setup, the planning effort of the calling thread, and wisdom import/export.

#include <fftw3.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fft/common.hpp"

namespace tenferro::fft {
namespace detail {

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

void init_threads_locked() {
  static bool done = false;  // guarded by planner_mutex()
  if (done) return;
  if (fftw_init_threads() == 0 || fftwf_init_threads() == 0) {
    fail(ErrorKind::Internal, "fft", "FFTW could not initialise its threads");
  }
  done = true;
}

unsigned effort_flags(PlanningEffort e) {
  switch (e) {
    case PlanningEffort::Estimate:
      return FFTW_ESTIMATE;
    case PlanningEffort::Measure:
      return FFTW_MEASURE;
    case PlanningEffort::Patient:
      return FFTW_PATIENT;
  }
  return FFTW_ESTIMATE;
}

namespace {
thread_local PlanningEffort t_effort = PlanningEffort::Estimate;

// Frees a string FFTW returned (allocated with malloc).
struct FftwString {
  char* s;
  ~FftwString() { std::free(s); }
};

// The top-level parenthesised expressions of `text` (FFTW writes one per
// precision); whitespace between them is skipped, anything else is an error.
std::vector<std::string> expressions(std::string_view text, const char* op) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c != '(') {
      fail(ErrorKind::InvalidArgument, op, "not FFTW wisdom: unexpected '", std::string(1, c),
           "' at offset ", i, "; pass a string from export_wisdom()");
    }
    int depth = 0;
    std::size_t j = i;
    for (; j < text.size(); ++j) {
      if (text[j] == '(') ++depth;
      if (text[j] == ')' && --depth == 0) break;
    }
    if (depth != 0) {
      fail(ErrorKind::InvalidArgument, op,
           "not FFTW wisdom: unbalanced parentheses; pass a string from export_wisdom()");
    }
    out.emplace_back(text.substr(i, j + 1 - i));
    i = j + 1;
  }
  return out;
}
}  // namespace

KernelSettings settings_for(Backend& backend) {
  KernelSettings ks;
  ks.effort = t_effort;
  if (auto* cpu = dynamic_cast<CpuBackend*>(&backend)) {
    ks.threads = cpu->num_threads();
    ks.cpu = cpu;
  }
  return ks;
}

}  // namespace detail

PlanningEffort planning_effort() {
  return detail::t_effort;
}

PlanningEffortScope::PlanningEffortScope(PlanningEffort effort) : previous_(detail::t_effort) {
  if (effort != PlanningEffort::Estimate && effort != PlanningEffort::Measure &&
      effort != PlanningEffort::Patient) {
    fail(ErrorKind::InvalidArgument, "PlanningEffortScope", "unknown planning effort ",
         static_cast<int>(effort), "; use Estimate, Measure or Patient");
  }
  detail::t_effort = effort;
}

PlanningEffortScope::~PlanningEffortScope() {
  detail::t_effort = previous_;
}

std::string export_wisdom() {
  std::lock_guard<std::mutex> lock(detail::planner_mutex());
  const detail::FftwString d{fftw_export_wisdom_to_string()};
  const detail::FftwString f{fftwf_export_wisdom_to_string()};
  if (d.s == nullptr || f.s == nullptr) {
    fail(ErrorKind::OutOfMemory, "export_wisdom", "FFTW could not export its wisdom");
  }
  return std::string(d.s) + std::string(f.s);
}

void import_wisdom(std::string_view wisdom) {
  const char* op = "import_wisdom";
  const auto parts = detail::expressions(wisdom, op);
  if (parts.empty()) {
    fail(ErrorKind::InvalidArgument, op,
         "the wisdom string is empty; pass a string from export_wisdom()");
  }
  std::lock_guard<std::mutex> lock(detail::planner_mutex());
  for (const std::string& part : parts) {
    const bool single = part.find("fftwf_wisdom") != std::string::npos;
    const bool ok = single ? fftwf_import_wisdom_from_string(part.c_str()) != 0
                           : fftw_import_wisdom_from_string(part.c_str()) != 0;
    if (!ok) {
      fail(ErrorKind::InvalidArgument, op, "FFTW rejected the ", single ? "single" : "double",
           "-precision wisdom (not wisdom, or from another FFTW version); pass a string from "
           "export_wisdom() of the same FFTW");
    }
  }
}

void export_wisdom_to_file(const std::string& path) {
  const std::string w = export_wisdom();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    fail(ErrorKind::InvalidArgument, "export_wisdom_to_file", "cannot open '", path,
         "' for writing; check the directory exists and is writable");
  }
  f << w;
  if (!f.flush()) {
    fail(ErrorKind::InvalidArgument, "export_wisdom_to_file", "writing '", path, "' failed");
  }
}

void import_wisdom_from_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    fail(ErrorKind::InvalidArgument, "import_wisdom_from_file", "cannot open '", path,
         "' for reading; check the path (write it with export_wisdom_to_file)");
  }
  std::stringstream ss;
  ss << f.rdbuf();
  import_wisdom(ss.str());
}

void forget_wisdom() {
  std::lock_guard<std::mutex> lock(detail::planner_mutex());
  fftw_forget_wisdom();
  fftwf_forget_wisdom();
}

}  // namespace tenferro::fft
