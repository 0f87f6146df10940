#pragma once
// The TRG of trg.hpp on several MPI processes: the network tensor and the
// matrices of its splits are sharded over the ranks of a 1-D mesh, the
// truncated SVDs run on ScaLAPACK (dist::linalg::svd_truncated on
// block-cyclic matrices) and the plaquette contraction is a dist::einsum.
// Every rank makes the same calls; the result is ln Z / N of the whole
// lattice, equal to the single-process log_z_per_site.

#include <cstdint>
#include <string>
#include <vector>

#include "tenferro/distributed/distributed.hpp"
#include "tenferro/tenferro.hpp"
#include "thermo.hpp"
#include "trg.hpp"

namespace ising {

/// What a distributed TRG held on this rank: the largest local part of any
/// tensor it made (network tensor, split matrices, factors, their SVDs)
/// against the largest whole tensor, which one process would hold.
struct DistTrgMemory {
  std::int64_t largest_local_bytes = 0;
  std::int64_t largest_global_bytes = 0;
  /// The tensor that had the largest local part ("network [16,16,16,16]").
  std::string largest_local_what;
};

/// ln Z / N as log_z_per_site, over tensors sharded on `mesh` (a 1-D mesh):
/// beta is a real scalar DTensor (Replicate, f64); the result is a
/// Replicate scalar. T is tenferro::EagerTensor (dist::DTensor) or
/// tenferro::TracedTensor (dist::TracedDTensor). The split matrices are
/// block-cyclic with blocks of d columns (d the bond dimension), so each
/// block is one index of the network's last leg. `memory`, when given,
/// records the local and global sizes of this rank's tensors.
template <class T>
tenferro::dist::BasicDTensor<T> log_z_per_site_dist(const tenferro::dist::BasicDTensor<T>& beta,
                                                    const TrgOptions& options,
                                                    const StepCallback& on_step = {},
                                                    DistTrgMemory* memory = nullptr);

/// Eager tier on the ranks of `mesh`: each call runs the distributed TRG at
/// one temperature. With `derivatives`, beta requires grad and the energy
/// and specific heat come from AD (grad, then jvp over it); without, only
/// ln Z / N and the free energy are set (energy and specific heat NaN).
class DistributedTrg {
 public:
  DistributedTrg(tenferro::EagerRuntimePtr runtime, tenferro::dist::Mesh mesh, TrgOptions options,
                 bool derivatives);
  Thermodynamics operator()(double beta, const StepCallback& on_step = {});
  /// The sizes of the last call's tensors on this rank.
  const DistTrgMemory& memory() const { return memory_; }

 private:
  tenferro::EagerRuntimePtr runtime_;
  tenferro::dist::Mesh mesh_;
  TrgOptions options_;
  bool derivatives_;
  DistTrgMemory memory_;
};

/// Traced tier on the ranks of `mesh`: each rank builds its program once
/// (beta a placeholder, ln Z / N and, with `derivatives`, dist::grad of it
/// and dist::grad of that), compiles and prepares it; each call runs it.
class DistributedTracedTrg {
 public:
  DistributedTracedTrg(tenferro::RuntimePtr runtime, const tenferro::dist::Mesh& mesh,
                       const TrgOptions& options, bool derivatives,
                       const StepCallback& on_step = {});
  Thermodynamics operator()(double beta) const;
  /// Op nodes of this rank's program.
  std::size_t node_count() const { return program_.node_count(); }
  /// The sizes of the program's tensors on this rank (set when it is built).
  const DistTrgMemory& memory() const { return memory_; }

 private:
  tenferro::RuntimePtr runtime_;
  bool derivatives_;
  DistTrgMemory memory_;
  tenferro::Program program_;
  tenferro::PreparedProgram prepared_;
};

}  // namespace ising
