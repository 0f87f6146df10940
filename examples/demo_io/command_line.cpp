#include "command_line.hpp"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace demo_io {

CommandLine::CommandLine(std::string program, Usage usage, int argc, char** argv)
    : program_(std::move(program)), usage_(usage), argc_(argc), argv_(argv) {}

void CommandLine::parse(DemoOptions& options, const OwnFlag& own_flag) {
  for (index_ = 1; index_ < argc_; ++index_) {
    flag_ = argv_[index_];
    if (!take_shared(options) && !own_flag(flag_)) fail("unknown option '" + flag_ + "'");
  }
}

std::string CommandLine::value() {
  if (index_ + 1 >= argc_) fail(flag_ + " needs a value");
  return argv_[++index_];
}

bool CommandLine::has_value() const {
  return index_ + 1 < argc_ && std::string(argv_[index_ + 1]).rfind("--", 0) != 0;
}

double CommandLine::number() {
  return number(value());
}

double CommandLine::number(const std::string& text) const {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    fail(flag_ + " expects a number, got '" + text + "'");
  }
}

int CommandLine::integer() {
  const std::string text = value();
  const double v = number(text);
  if (v != std::floor(v) || std::abs(v) > 1e9)
    fail(flag_ + " expects an integer, got '" + text + "'");
  return static_cast<int>(v);
}

bool CommandLine::take_shared(DemoOptions& options) {
  if (flag_ == "--help" || flag_ == "-h") {
    usage_(std::cout);
    std::exit(0);
  } else if (flag_ == "--t-min") {
    options.t_min = number();
  } else if (flag_ == "--t-max") {
    options.t_max = number();
  } else if (flag_ == "--temps") {
    options.temperatures = integer();
  } else if (flag_ == "--temperatures") {
    std::stringstream list(value());
    for (std::string item; std::getline(list, item, ',');) {
      options.explicit_temperatures.push_back(number(item));
    }
  } else if (flag_ == "--mode") {
    const std::string mode = value();
    if (mode != "traced" && mode != "eager") fail("--mode is traced or eager, got '" + mode + "'");
    options.traced = mode == "traced";
  } else if (flag_ == "--threads") {
    options.threads = integer();
    if (options.threads < 0) fail("--threads must be >= 0 (0: all cores)");
  } else if (flag_ == "--out") {
    options.out = value();
  } else if (flag_ == "--no-plot") {
    options.plot = false;
  } else if (flag_ == "--plot-script") {
    options.plot_script = value();
  } else {
    return false;
  }
  return true;
}

void CommandLine::finish(DemoOptions& options) const {
  std::vector<double>& temps = options.explicit_temperatures;
  if (temps.empty()) {
    const int n = options.temperatures;
    if (n < 1) fail("--temps must be at least 1");
    if (!(options.t_min > 0) || !(options.t_max >= options.t_min))
      fail("need 0 < --t-min <= --t-max");
    for (int i = 0; i < n; ++i) {
      const double frac = n == 1 ? 0.0 : static_cast<double>(i) / (n - 1);
      temps.push_back(options.t_min + frac * (options.t_max - options.t_min));
    }
  }
  for (double t : temps) {
    if (!(t > 0)) fail("temperatures must be positive");
  }
}

void CommandLine::fail(const std::string& message) const {
  std::cerr << program_ << ": " << message << "\n\n";
  usage_(std::cerr);
  std::exit(2);
}

}  // namespace demo_io
