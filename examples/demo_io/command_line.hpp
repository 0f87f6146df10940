#pragma once
// The command line of the Ising demos (ising_trg, ctmrg_ising): the flags
// they share parsed in one place, and the value checks their own flags use.

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace demo_io {

/// The flags every Ising demo takes: temperatures, tier, threads, output.
struct DemoOptions {
  DemoOptions(std::string out_dir, std::string plot_script_path)
      : out(std::move(out_dir)), plot_script(std::move(plot_script_path)) {}

  double t_min = 1.6;
  double t_max = 3.2;
  int temperatures = 17;
  /// --temperatures, or the evenly spaced ones (CommandLine::finish).
  std::vector<double> explicit_temperatures;
  bool traced = true;
  int threads = 0;
  std::string out;
  bool plot = true;
  std::string plot_script;
};

/// The help lines of the shared flags whose text is the same in every demo,
/// for the demos' usage texts.
inline constexpr std::string_view kTemperaturesHelp =
    "  --t-min T --t-max T --temps N\n"
    "                     N temperatures evenly from T-min to T-max (default 1.6, 3.2, 17)\n"
    "  --temperatures a,b,...  explicit temperatures instead\n";
inline constexpr std::string_view kThreadsHelp =
    "  --threads N        CPU threads (default: all cores)\n";
inline constexpr std::string_view kNoPlotHelp = "  --no-plot          skip the matplotlib plot\n";

/// Reads argv flag by flag. A bad flag or value prints
/// "<program>: <message>", a blank line and the usage to stderr, and exits
/// with status 2; --help prints the usage to stdout and exits with 0.
class CommandLine {
 public:
  using Usage = void (*)(std::ostream&);
  /// Takes a demo's own flag (the current one, `flag`), reading its value
  /// with number(), integer() or value(); false for a flag it does not know.
  using OwnFlag = std::function<bool(const std::string& flag)>;
  CommandLine(std::string program, Usage usage, int argc, char** argv);

  /// Reads every flag: --help and those of DemoOptions into `options`, the
  /// others through `own_flag`; fails on an unknown one.
  void parse(DemoOptions& options, const OwnFlag& own_flag);
  /// After the demo's own checks: checks the temperatures and, without
  /// --temperatures, spaces --temps of them evenly from --t-min to --t-max.
  void finish(DemoOptions& options) const;

  /// The current flag's value: the next argument.
  std::string value();
  /// Whether the next argument is a value rather than a flag (for a flag
  /// whose value is optional).
  bool has_value() const;
  /// The current flag's value as a finite number.
  double number();
  /// The current flag's value as an integer.
  int integer();

  [[noreturn]] void fail(const std::string& message) const;

 private:
  bool take_shared(DemoOptions& options);
  double number(const std::string& text) const;

  std::string program_;
  Usage usage_;
  int argc_;
  char** argv_;
  int index_ = 0;
  std::string flag_;
};

}  // namespace demo_io
