#pragma once
// What the Ising demos write besides their own table and CSV columns: the
// error columns, the temperatures of the exact curves, the CSV files and
// the plot.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "command_line.hpp"

namespace demo_io {

/// |got - exact| / |exact| in a 9-wide column, the absolute error where the
/// exact value is 0 (the magnetisation above Tc), "n/a" where it is not finite.
std::string error_column(double got, double exact);

/// 601 temperatures from 0.9 times the lowest of `temperatures` (first or
/// last) to 1.05 times the highest, without `critical_temperature` (where
/// the exact specific heat diverges).
std::vector<double> exact_curve_temperatures(const std::vector<double>& temperatures,
                                             double critical_temperature);

/// Writes one of a demo's CSV files: its header line, then its rows.
using CsvWriter = std::function<void(std::ostream& csv)>;

/// Writes <demo>.csv through `points` and <demo>_exact.csv through
/// `exact_curves` (12 significant digits) into options.out and says so on
/// stdout; then, unless --no-plot, runs `/usr/bin/python3 plot_script out
/// chi <demo>.png` (it needs matplotlib; a failure only says so). False,
/// after saying so on stderr, when the CSV files could not be written.
bool write_csv_and_plot(const DemoOptions& options, const std::string& demo, int chi,
                        const CsvWriter& points, const CsvWriter& exact_curves);

}  // namespace demo_io
