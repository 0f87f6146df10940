#pragma once
// Shared by the distributed linear algebra tests (linalg_mpitest.cpp,
// linalg_errors_mpitest.cpp): the grids the rank count allows, inputs, and
// gauge-independent comparisons.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distributed/mpi_test_util.hpp"
#include "tenferro/distributed/linalg.hpp"

namespace linalg_test {

using namespace tenferro;
using namespace mpitest;
using dist::DTensor;
using dist::Placements;

/// A mesh and how a matrix is laid out on it (a 1-D mesh: a 1xP grid with
/// column blocks, or a Px1 grid with row blocks).
struct Layout {
  std::string name;
  dist::Mesh mesh;
  bool rows_on_line = false;
  Placements placements(std::int64_t block) const {
    if (mesh.ndim() == 1 && rows_on_line) return {dist::Shard(0, block)};
    return dist::block_cyclic_placements(mesh, block);
  }
};

/// Every grid this rank count allows, made once (meshes split communicators,
/// which live until MPI_Finalize).
inline const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = [] {
    std::vector<Layout> v;
    const dist::Communicator world = dist::Communicator::world();
    const int p = world.size();
    for (int r = 1; r <= p; ++r) {
      if (p % r != 0) continue;
      v.push_back(
          {std::to_string(r) + "x" + std::to_string(p / r), dist::Mesh(world, {r, p / r}), false});
    }
    v.push_back({"line 1x" + std::to_string(p), dist::Mesh::line(world), false});
    if (p > 1) v.push_back({"line " + std::to_string(p) + "x1", dist::Mesh::line(world), true});
    if (p > 2 && p % 2 == 0) {
      // Pairs of ranks, each pair its own 1x2 and 2x1 grid.
      const dist::Communicator pair = world.split(world.rank() / 2, world.rank());
      v.push_back({"pair 1x2", dist::Mesh(pair, {1, 2}), false});
      v.push_back({"pair 2x1", dist::Mesh(pair, {2, 1}), false});
    }
    if (p > 1) {
      const dist::Communicator self = world.split(world.rank(), 0);
      v.push_back({"self 1x1", dist::Mesh(self, {1, 1}), false});
    }
    return v;
  }();
  return all;
}

inline const std::vector<DType>& dtypes() {
  static const std::vector<DType> all = {f64, c128, f32, c64};
  return all;
}

inline double tol(DType dt) {
  return real_dtype(dt) == f64 ? 1e-10 : 2e-4;
}

/// The same random matrix on every rank.
inline Tensor random_matrix(std::int64_t m, std::int64_t n, DType dt, std::uint64_t seed) {
  Generator gen(seed);
  return randn({m, n}, dt, gen);
}

inline EagerTensor eager(const Tensor& t) {
  return runtime()->tensor(t);
}

inline DTensor place(const Tensor& full, const Layout& l, std::int64_t block) {
  return dist::distribute(eager(full), l.mesh, l.placements(block));
}

inline Tensor whole(const DTensor& d) {
  return dist::full_tensor(d).value();
}

inline EagerTensor adjoint(const EagerTensor& x) {
  return conj(transpose(x));
}

/// |X^H Y| against the identity: X and Y span the same vectors up to a
/// phase each (the gauge of singular and eigen vectors).
inline double gauge_distance(const Tensor& x, const Tensor& y) {
  const Tensor overlap = abs(matmul(adjoint(eager(x)), eager(y))).value();
  return max_abs_diff(overlap, eye(x.dim(1), x.dim(1), overlap.dtype()));
}

inline std::string what(const Layout& l, DType dt, std::int64_t block) {
  return l.name + " " + std::string(name(dt)) + " nb=" + std::to_string(block);
}

/// Block sizes that do not divide the extents used below (5, 6, 7).
constexpr std::int64_t kBlocks[] = {2, 3};

}  // namespace linalg_test
