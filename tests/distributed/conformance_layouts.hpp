#pragma once
// The placements and inputs the distributed conformance tests
// (conformance_mpitest.cpp: values, conformance_grads_mpitest.cpp:
// gradients) run the conformance suite's tables on.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "distributed/mpi_test_util.hpp"

namespace mpitest {

using dist::DTensor;
using dist::Placements;
using Kind = dist::Placement::Kind;

inline const dist::Mesh& line_mesh() {
  static const dist::Mesh mesh = dist::Mesh::line();
  return mesh;
}

// Built only with 4 ranks.
inline const dist::Mesh& grid_mesh() {
  static const dist::Mesh mesh(dist::Communicator::world(), {2, 2});
  return mesh;
}

inline std::string text(const Placements& ps) {
  std::string s;
  for (const auto& p : ps) s += (s.empty() ? "" : ",") + p.to_string();
  return s;
}

inline bool has_partial(const Placements& ps) {
  return std::any_of(ps.begin(), ps.end(), [](const auto& p) { return p.kind == Kind::Partial; });
}

// A pending sum summed: what a nonlinear op (and a gradient) gives back.
inline Placements summed(Placements ps) {
  for (auto& p : ps)
    if (p.kind == Kind::Partial) p = dist::Replicate();
  return ps;
}

/// A mesh and one placement per mesh axis.
struct Layout {
  const dist::Mesh* mesh;
  Placements placements;
  std::string label() const { return mesh->to_string() + " " + text(placements); }
};

// Every placement kind on a line of all ranks (contiguous and block-cyclic
// shards of either axis) and, with 4 ranks, both axes of a 2x2 mesh sharded.
inline const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = [] {
    std::vector<Layout> v;
    for (const Placements& ps : std::vector<Placements>{{dist::Shard(0)},
                                                        {dist::Shard(1)},
                                                        {dist::Shard(0, 2)},
                                                        {dist::Replicate()},
                                                        {dist::Partial()}})
      v.push_back({&line_mesh(), ps});
    if (world_size() == 4) {
      for (const Placements& ps : std::vector<Placements>{{dist::Shard(0), dist::Shard(1)},
                                                          {dist::Shard(1, 2), dist::Replicate()},
                                                          {dist::Partial(), dist::Shard(0)}})
        v.push_back({&grid_mesh(), ps});
    }
    return v;
  }();
  return all;
}

/// The layouts on `mesh`, for ops whose operands share a mesh.
inline std::vector<Layout> layouts_on(const dist::Mesh& mesh) {
  std::vector<Layout> v;
  for (const auto& l : layouts())
    if (l.mesh == &mesh) v.push_back(l);
  return v;
}

inline std::vector<const dist::Mesh*> meshes() {
  std::vector<const dist::Mesh*> v{&line_mesh()};
  if (world_size() == 4) v.push_back(&grid_mesh());
  return v;
}

inline DTensor put(const Tensor& full, const Layout& l) {
  return dist::distribute(runtime()->tensor(full), *l.mesh, l.placements);
}

// A [5, 4] tensor of `dt` from a value row's inputs: unless `interior`, the
// first entries are the inputs themselves (special values included); the
// rest lie strictly between the finite inputs (near the one input of a row
// with one), so each op stays in its domain and the places differ. A
// complex tensor has imaginary parts in [-0.1, 0.1).
inline Tensor row_grid(const std::vector<double>& inputs, DType dt, std::uint64_t seed,
                       bool interior) {
  Generator gen(seed);
  const std::vector<double> u = rand({20}, f64, gen).to_vector<double>();
  std::vector<double> finite;
  for (const double v : inputs)
    if (std::isfinite(v)) finite.push_back(v);
  const double lo = *std::min_element(finite.begin(), finite.end());
  const double hi = *std::max_element(finite.begin(), finite.end());
  std::vector<double> re(20);
  for (std::size_t k = 0; k < re.size(); ++k) {
    if (!interior && k < inputs.size()) {
      re[k] = inputs[k];
    } else {
      re[k] = hi > lo ? lo + (hi - lo) * (0.05 + 0.9 * u[k]) : lo + 0.1 * u[k];
    }
  }
  const Tensor r = Tensor::from_col_major({5, 4}, re);
  if (!is_complex(dt)) return r;
  std::vector<double> im = rand({20}, f64, gen).to_vector<double>();
  for (auto& v : im) v = 0.2 * v - 0.1;
  return tenferro::complex(r, Tensor::from_col_major({5, 4}, im));
}

// Runs one case; an error fails the test naming it (the layer raises it
// on every rank alike, so the ranks stay in step) and the case is not
// counted.
template <class F>
bool run_case(const std::string& what, F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    ADD_FAILURE() << what << " threw " << e.what();
    return false;
  }
}

/// Prints one line of counts on rank 0.
inline void summary(const std::string& line) {
  if (dist::Communicator::world().rank() == 0)
    std::printf("[conformance np%d] %s\n", world_size(), line.c_str());
}

inline bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

}  // namespace mpitest
