#pragma once
// An Ising spin-glass instance in the format of ../shared/spinglass-instances
// (see its README): spins s_i = +-1, i = 0..n-1, and the energy
//   E(s) = - sum over edges (i, j, J) of J s_i s_j  -  sum_i h_i s_i
// with integer couplings J and fields h. Also the generators of larger
// instances (square lattices, random 3-regular graphs) and their JSON.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace spinglass_tool {

/// Bad input: an unreadable file, malformed JSON, a field of the wrong kind or
/// out of range. The message names the file and what is wrong.
struct InstanceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Edge {
  std::int64_t i = 0;
  std::int64_t j = 0;
  std::int64_t coupling = 0;
};

struct Instance {
  std::string name;
  std::string lattice;  // "square_open", "random_regular3", or as the file says
  std::int64_t L = 0;   // the side of a square lattice, 0 otherwise
  std::int64_t n = 0;   // spins
  std::vector<Edge> edges;
  std::vector<std::int64_t> fields;  // h_i, n of them
  /// The exact reference, when the file ships one.
  std::optional<std::int64_t> ground_energy;
  std::optional<double> degeneracy;
};

/// Largest number of spins an instance may have, and the bound on
/// sum |J| + sum |h| that keeps every energy exact in f64 and i64.
constexpr std::int64_t kMaxSpins = std::int64_t{1} << 20;
constexpr std::int64_t kMaxEnergy = std::int64_t{1} << 50;

/// Reads an instance file (InstanceError when it is not one).
Instance load_instance(const std::string& file);
/// Parses an instance from its JSON text; `what` names it in errors and is the
/// name when the JSON has none. Required: "edges" ([[i, j, J], ...], integers,
/// 0 <= i, j < n, i != j). Optional: "n" (else the length of "fields", else
/// L * L, else 1 + the largest spin index), "fields" (else zeros), "name",
/// "lattice", "L", "ground_energy", "degeneracy".
Instance parse_instance(const std::string& text, const std::string& what);
/// The instance as JSON in the same format (what parse_instance reads).
nlohmann::json to_json(const Instance& inst);

/// E(s) for spins of +-1 (InstanceError for a wrong length or another value).
std::int64_t energy(const Instance& inst, const std::vector<int>& spins);

/// How generated couplings or fields are drawn.
enum class Draw {
  Zero,  ///< all 0 (fields only)
  Pm1,   ///< +-1 with equal probability
  Int9,  ///< integers in [-9, 9] without 0, uniformly
};
/// "zero", "pm1", "int9" (InstanceError for another name).
Draw parse_draw(const std::string& name);

/// An L x L square lattice with open boundaries, spins numbered row by row
/// (i = r L + c), the horizontal edges first (as the shipped instances).
/// The same (L, seed, draws) give the same instance on every platform.
Instance generate_square(std::int64_t L, std::uint64_t seed, Draw couplings = Draw::Pm1,
                         Draw fields = Draw::Zero);
/// A uniformly drawn simple 3-regular graph on n spins (n even, n >= 4), by the
/// configuration model with rejection of self-loops and repeated edges.
Instance generate_regular3(std::int64_t n, std::uint64_t seed, Draw couplings = Draw::Pm1,
                           Draw fields = Draw::Zero);

}  // namespace spinglass_tool
