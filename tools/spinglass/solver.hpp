#pragma once
// Spin-glass ground states by tropical tensor networks (Liu, Wang and Zhang,
// PRL 126, 090506 (2021)); docs/tropical.md, "Spin glasses".
//
// Maximising -E(s) = sum_edges J s_i s_j + sum_i h_i s_i is a max-plus
// contraction of a network with one label per spin: a vertex tensor
// w_i(s_i) = h_i s_i (length 2, kept when h_i = 0 so that its gradient reads
// the spin) and an edge tensor B(s_i, s_j) = J s_i s_j (2 x 2) per edge; a
// spin's label is a hyperedge joining its vertex and edge tensors, and the
// output is a scalar. Index 0 of an axis is s = -1, index 1 is s = +1.
//   - ground energy: minus the max-plus value;
//   - degeneracy: the count of the counting tropical contraction;
//   - a ground state: the gradient of the value with respect to the vertex
//     tensors is 1 at the chosen s_i and 0 at the other (eager tier);
//   - checks: E at that configuration, and the value and count again along
//     a second contraction order.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "instance.hpp"
#include "tenferro/einsum/einsum.hpp"

namespace spinglass_tool {

/// The network of an instance: labels (label i = spin i) and operands (the n
/// vertex tensors first, then one per edge) in `dtype` (f64 or i64). With
/// `fixed` (n entries: +-1 fixes a spin, 0 leaves it free), a fixed spin's
/// axes have extent 1 (a slice of the network; the labels are the same).
struct Network {
  tenferro::EinsumLabels labels;
  std::vector<tenferro::Tensor> operands;
  std::vector<tenferro::Shape> shapes;
};
Network build_network(const Instance& inst, tenferro::DType dtype,
                      const std::vector<int>& fixed = {});

/// An estimate of the memory the eager gradient along `plan` holds at its
/// peak, in bytes: the tape of one slice (every pairwise result with its
/// winning indices) and the cotangents of the largest step.
double gradient_tape_bytes(const Network& net, const tenferro::EinsumPlan& plan);

struct SolveOptions {
  /// Strategy, seed, search work and memory limit of the first contraction
  /// order (the semiring and path are set by solve()).
  tenferro::EinsumOptions einsum;
  /// Values of the counting contraction: f64 or i64 (both exact: the reader
  /// bounds |energies| by 2^50). The gradient always runs in f64 (integers
  /// are not differentiable).
  tenferro::DType dtype = tenferro::DType::F64;
  /// Threads of the CPU backend (0: the number of cores).
  int threads = 0;
  bool configuration = true;  ///< recover a ground state by the gradient
  bool second_order = true;   ///< contract again along another order
  /// Progress lines (planning, contracting, ...), or none.
  std::function<void(const std::string&)> progress;
};

/// One contraction order and what contracting along it cost.
struct OrderReport {
  tenferro::EinsumPlan plan;
  double search_ms = 0;
  double contract_ms = 0;
};

struct Solution {
  std::int64_t ground_energy = 0;
  double degeneracy = 0;                     ///< an integer (exact below 2^53)
  std::vector<int> configuration;            ///< +-1 per spin; empty without a gradient
  std::optional<std::int64_t> energy_check;  ///< E(configuration)
  double gradient_ms = 0;
  /// The gradient's order: the first one, or (gradient_order_differs) one
  /// sliced finer so that its tape, gradient_tape_bytes (an estimate, see
  /// gradient_tape_bytes()), fits the memory limit.
  std::optional<OrderReport> gradient_order;
  bool gradient_order_differs = false;
  double gradient_tape_bytes = 0;
  /// Slices of the gradient's order contracted to find one that reaches the
  /// ground energy (0 when it is not sliced).
  std::int64_t gradient_slices_contracted = 0;
  /// A gradient entry neither 0 nor 1, or a vertex whose two entries are not
  /// one 0 and one 1 (the gradient did not mark one configuration).
  bool gradient_one_hot = true;
  OrderReport first;
  std::optional<OrderReport> second;  ///< with SolveOptions::second_order
  std::optional<std::int64_t> second_order_energy;
  std::optional<double> second_order_degeneracy;
  bool second_path_differs = false;

  /// Every check that ran passed: the configuration has the ground energy,
  /// the second order gives the same energy and degeneracy.
  bool consistent() const;
};

/// Solves `inst` (tenferro::Error from the library, e.g. InvalidArgument for a
/// memory limit slicing cannot reach).
Solution solve(const Instance& inst, const SolveOptions& options = {});

}  // namespace spinglass_tool
