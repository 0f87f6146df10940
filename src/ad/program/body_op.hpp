#pragma once
// Ops with bodies: traced ops that carry sub-programs. A checkpoint region is
// one; cond, while and scan are others. Compile, prepare, run and the AD
// transforms reach a body only through the hooks below, so no pass of the
// traced tier special-cases a kind of body op.

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ad/program/graph.hpp"
#include "tenferro/ad/rules.hpp"

namespace tenferro::detail {

struct PreparedState;  // ad/program/exec.hpp
struct LiveCounter;

/// A body prepared for runs: one prepared program per body, made once by
/// BodyOp::prepare for each prepared program that holds the op.
using PreparedBodies = std::vector<std::shared_ptr<const PreparedState>>;

/// What a run hook works with: the runtime and backend of the run, the named
/// sizes bound so far (a body may bind dynamic ones), the live-value count,
/// and the run's statistics (null when not asked for): the steps and fused
/// passes of every body run count there.
struct BodyRun {
  Runtime& runtime;
  Backend& backend;
  DimBindings& bindings;
  LiveCounter& counter;
  RunStats* stats = nullptr;
};

class BodyOp : public Op {
 public:
  /// The sub-programs, in a fixed order (prepare() prepares them so).
  virtual std::span<const Program> bodies() const = 0;

  // ---- prepare and run --------------------------------------------------------
  /// Prepares the bodies for runs on `runtime`. The default prepares each
  /// body as a program with the outer program's options.
  virtual PreparedBodies prepare(Runtime& runtime, const PrepareOptions& options) const;
  /// Runs the op. `inputs` are the op's own: the executor's release analysis
  /// moved in every value the outer program reads no more, so the op may drop
  /// an input as soon as it is done with it (run_body does so at the input's
  /// last use in the body; a loop after its first iteration).
  virtual std::vector<Tensor> run(const BodyRun& run, const PreparedBodies& bodies,
                                  std::vector<Tensor> inputs) const = 0;

  // ---- the AD transforms (traced values) ----------------------------------------
  // `inputs` are the node's operands and `outputs` its results (an op whose
  // derivatives read its solution, such as a fixed point, uses them).
  /// The outputs' tangents (nullopt: zero) from the inputs and their tangents.
  virtual std::vector<std::optional<TracedTensor>> jvp(
      std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
      std::span<const std::optional<TracedTensor>> tangents, const ad::AdContext& rules) const = 0;
  /// The transpose of the op in reverse mode: the inputs' cotangents
  /// (nullopt: zero) from the inputs and the outputs' cotangents.
  virtual std::vector<std::optional<TracedTensor>> vjp(
      std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
      std::span<const std::optional<TracedTensor>> cotangents,
      const ad::AdContext& rules) const = 0;
};

/// The op as a body op, or nullptr.
inline const BodyOp* body_op(const Op* op) {
  return dynamic_cast<const BodyOp*>(op);
}

/// Runs one prepared body on owned inputs: each input is released at its
/// last use in the body, every intermediate at its own.
std::vector<Tensor> run_body(const BodyRun& run, const PreparedState& body,
                             std::vector<Tensor> inputs);

}  // namespace tenferro::detail
