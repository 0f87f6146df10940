#pragma once
// The ops behind scan() (tenferro/ad/control_flow.hpp): ScanOp runs a body
// once per slice of the scanned inputs; its reverse mode (scan_vjp.cpp) is
// a composition of ScanOps, or, with checkpoint_every > 1, one
// "scan_backward" op that recomputes the carries between checkpoints.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ad/program/body_op.hpp"
#include "ad/traced/body_trace.hpp"

namespace tenferro::detail {

/// What a scan does besides its body: the direction, the reverse-mode
/// memory policy, the step count when nothing is scanned, and whether it
/// also returns the carry before each step, stacked (the residuals a plain
/// reverse pass reads).
struct ScanConfig {
  bool reverse = false;
  std::int64_t checkpoint_every = 0;
  std::int64_t length = -1;  // the step count when the scan has no xs
  bool stores_carries = false;
  friend bool operator==(const ScanConfig&, const ScanConfig&) = default;
};

/// A scan: inputs (init carries..., xs..., captured...), outputs (final
/// carries..., ys stacked along a new last axis..., and with stores_carries
/// the carries before each step, stacked the same way). The body takes
/// (carries..., x slices..., captured...) and returns (carries..., ys...).
class ScanOp final : public BodyOp {
 public:
  ScanOp(Program body, std::size_t carries, std::size_t xs, ScanConfig config);
  std::string_view name() const override { return "scan"; }
  std::size_t input_count() const override { return body_.input_count(); }
  std::size_t output_count() const override;
  std::size_t hash() const override;
  bool equals(const Op& other) const override;
  InferenceResult infer(std::span<const TensorMeta> inputs) const override;
  std::string describe() const override;

  std::span<const Program> bodies() const override { return {&body_, 1}; }
  std::vector<Tensor> run(const BodyRun& run, const PreparedBodies& bodies,
                          std::vector<Tensor> inputs) const override;
  std::vector<std::optional<TracedTensor>> jvp(
      std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
      std::span<const std::optional<TracedTensor>> tangents,
      const ad::AdContext& rules) const override;
  std::vector<std::optional<TracedTensor>> vjp(
      std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
      std::span<const std::optional<TracedTensor>> cotangents,
      const ad::AdContext& rules) const override;

  const Program& body() const { return body_; }
  std::size_t carries() const { return carries_; }
  std::size_t xs() const { return xs_; }
  std::size_t ys() const { return body_.output_count() - carries_; }
  std::size_t captured() const { return body_.input_count() - carries_ - xs_; }
  const ScanConfig& config() const { return config_; }

 private:
  Program body_;
  std::size_t carries_, xs_;
  ScanConfig config_;
};

/// Reverse mode of a scan (scan_vjp.cpp).
std::vector<std::optional<TracedTensor>> scan_vjp(
    const ScanOp& op, std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
    std::span<const std::optional<TracedTensor>> cotangents, const ad::AdContext& rules);

// ---- shared by the scan ops --------------------------------------------------------

/// Checks an operand against the body input it feeds: equal metadata, or,
/// for a scanned operand, the body's slice with one more (last) axis.
void check_scan_operand(const TensorMeta& got, const TensorMeta& traced, bool scanned,
                        const char* what, std::size_t index);
/// The step count of a scan whose scanned operands are `scanned` (each
/// sliced along its last axis): their common last extent (a constraint
/// where symbolic), or `length` when there are none.
SymDim scan_length(std::span<const TensorMeta> scanned, std::int64_t length,
                   InferenceResult& result);
/// `meta` with one more (last) axis of extent n.
TensorMeta stacked(TensorMeta meta, const SymDim& n);

/// Stacked outputs filled slice by slice: each buffer is allocated at its
/// first slice (or from `metas` when a scan has no step) and counts in the
/// run's LiveCounter while the scan holds it: as one value, or with
/// `count_slices` as one per slice written (stored carries: the values
/// reverse mode keeps, which checkpointing trades for recomputation).
class StackedOutputs {
 public:
  StackedOutputs(const BodyRun& run, std::size_t count, std::int64_t n, bool count_slices = false);
  ~StackedOutputs();
  StackedOutputs(const StackedOutputs&) = delete;
  StackedOutputs& operator=(const StackedOutputs&) = delete;
  /// Copies `value` into slice t of buffer k.
  void write(std::size_t k, std::int64_t t, const Tensor& value);
  /// The buffers; those never written are allocated from `metas` (their
  /// per-step metadata) under the run's bindings.
  std::vector<Tensor> take(std::span<const TensorMeta> metas);

 private:
  const BodyRun& run_;
  std::int64_t n_;
  bool count_slices_;
  std::vector<Tensor> buffers_;
  std::size_t counted_ = 0;
};

}  // namespace tenferro::detail
