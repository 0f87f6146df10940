#include "demo_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace demo_io {

std::string error_column(double got, double exact) {
  if (!std::isfinite(exact)) return "      n/a";
  std::ostringstream os;
  const double scale = exact == 0 ? 1.0 : std::abs(exact);
  os << std::scientific << std::setprecision(1) << std::setw(9) << std::abs(got - exact) / scale;
  return os.str();
}

std::vector<double> exact_curve_temperatures(const std::vector<double>& temperatures,
                                             double critical_temperature) {
  const double lo = std::min(temperatures.front(), temperatures.back()) * 0.9;
  const double hi = std::max(temperatures.front(), temperatures.back()) * 1.05;
  std::vector<double> grid;
  for (int k = 0; k <= 600; ++k) {
    const double t = lo + (hi - lo) * k / 600.0;
    if (std::abs(t - critical_temperature) < 1e-9) continue;
    grid.push_back(t);
  }
  return grid;
}

bool write_csv_and_plot(const DemoOptions& options, const std::string& demo, int chi,
                        const CsvWriter& points, const CsvWriter& exact_curves) {
  std::filesystem::create_directories(options.out);
  const std::filesystem::path out(options.out);
  const std::filesystem::path points_file = out / (demo + ".csv");
  const std::filesystem::path exact_file = out / (demo + "_exact.csv");
  {
    std::ofstream csv(points_file);
    points(csv << std::setprecision(12));
    std::ofstream exact(exact_file);
    exact_curves(exact << std::setprecision(12));
    if (!csv || !exact) {
      std::cerr << demo << ": could not write the CSV files in " << options.out << "\n";
      return false;
    }
  }
  std::cout << "wrote " << points_file.string() << " and " << exact_file.string() << "\n";
  if (options.plot) {
    const std::string png = (out / (demo + ".png")).string();
    const std::string command = "/usr/bin/python3 '" + options.plot_script + "' '" + out.string() +
                                "' '" + std::to_string(chi) + "' '" + png + "'";
    if (std::system(command.c_str()) == 0) {
      std::cout << "wrote " << png << "\n";
    } else {
      std::cout
          << "plot skipped: it needs /usr/bin/python3 with matplotlib (Debian: apt-get install "
             "python3-matplotlib); the CSV files have the numbers\n";
    }
  }
  return true;
}

}  // namespace demo_io
