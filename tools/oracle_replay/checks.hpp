#pragma once
// The checks of one case in one mode: jvp, vjp of every input and hvp against
// pytorch_ref, or the typed error of an `error` case.

#include <string>
#include <vector>

#include "case.hpp"
#include "tenferro/ad/eager.hpp"

namespace replay {

struct Failure {
  std::string mode;   // eager | traced
  std::string probe;  // probe id
  std::string check;  // jvp:value, vjp:a, hvp:b, error, run, ...
  double max_abs = 0.0;
  double max_rel = 0.0;
  std::string note;
};

struct ModeResult {
  std::vector<Failure> failures;
  int checks = 0;  // comparisons made
};

ModeResult check_eager(const Case& c, const tenferro::EagerRuntimePtr& rt);
ModeResult check_traced(const Case& c, const tenferro::EagerRuntimePtr& rt);

}  // namespace replay
