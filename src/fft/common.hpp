#pragma once
// What the FFT family shares: the one transform op (a self-installing,
// rule-carrying extension op), its parameters, the FFTW kernels and the tier
// dispatch. Private to src/fft/; the family uses only tenferro's public
// headers, as a third-party family would.

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "tenferro/ad/eager_extension.hpp"
#include "tenferro/ad/on_backend.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/core/report_as.hpp"
#include "tenferro/fft/fft.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::fft::detail {

using tenferro::detail::on_backend;

inline constexpr const char* kModuleId = "tenferro.fft";
/// The name of the runtime extension cache holding FFTW plans.
inline constexpr const char* kPlanCache = "fftw_plans";

/// What a transform node computes. axes[0] is the halved axis of the real
/// kinds; `n` its full (real) length; sign the exponent's sign; the result
/// is multiplied by `scale`.
///   C2C:     complex -> complex, the DFT over every axis.
///   R2C:     real -> complex half spectrum (axes[0] has n / 2 + 1 entries).
///   C2R:     complex half spectrum -> real of length n along axes[0] (the
///            DFT over the other axes first, then the Hermitian c2r; the
///            imaginary parts of the DC / Nyquist bins are ignored).
///   R2C_ADJ: the adjoint of R2C: Re(DFT(zero-padded half spectrum)).
///   C2R_ADJ: the adjoint of C2R: r2c, bins 1 .. n - m doubled, then DFT.
enum class Kind : std::uint8_t { C2C, R2C, C2R, R2C_ADJ, C2R_ADJ };

struct FftParams {
  Kind kind = Kind::C2C;
  std::vector<std::int64_t> axes;
  std::int64_t n = 0;
  int sign = -1;
  double scale = 1.0;
  bool operator==(const FftParams&) const = default;
};
std::size_t hash_value(const FftParams& p);

class FftOp final : public ExtensionOp, public SelfInstallingOp, public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "tenferro.fft_transform.v1";
  explicit FftOp(FftParams p) : family_(std::string(kFamily)), params_(std::move(p)) {}
  const FamilyId& family_id() const override { return family_; }
  const FftParams& params() const { return params_; }
  std::size_t hash() const override;
  bool equals(const Op& other) const override;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  std::string describe() const override;
  InferenceResult infer(std::span<const TensorMeta> in) const override;
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override;
  const ad::RuleSet& ad_rules() const override { return rules(); }
  static const ad::RuleSet& rules();
  /// Runs the transform on a concrete input (checked by infer()); FFTW plans
  /// come from (and go to) `caches`.
  Tensor execute(Backend& backend, const Tensor& x, ExtensionCaches& caches) const;

 private:
  FamilyId family_;
  FftParams params_;
};

std::shared_ptr<const FftOp> make_op(FftParams p);

/// The one mutex around every FFTW planner call (plan creation and
/// destruction, thread setup, wisdom): FFTW's planner is not thread-safe.
/// Execution of existing plans does not take it.
std::mutex& planner_mutex();
/// Initialises FFTW's threads (both precisions) once; call with
/// planner_mutex() held.
void init_threads_locked();
/// The FFTW planner flag of an effort (FFTW_ESTIMATE, FFTW_MEASURE, ...).
unsigned effort_flags(PlanningEffort e);

/// What a kernel takes from its context: the calling thread's planning
/// effort and the backend's thread count.
struct KernelSettings {
  PlanningEffort effort = PlanningEffort::Estimate;
  int threads = 1;
  CpuBackend* cpu = nullptr;  // the backend whose pool threaded plans park
};
KernelSettings settings_for(Backend& backend);

/// The FFTW kernel of a node (kernels.cpp): x is any layout; the output is
/// a fresh compact tensor from `backend`.
Tensor run_transform(const FftParams& p, const Tensor& x, Backend& backend,
                     ExtensionCaches& caches);

/// Transforms a complex compact tensor in place: the DFT over `axes` with
/// exponent sign `sign`, times `scale` (an in-place FFTW plan from `caches`).
void c2c_in_place(Tensor& x, const std::vector<std::int64_t>& axes, int sign, double scale,
                  ExtensionCaches& caches, const KernelSettings& ks);
/// The family's module for an eager target (Unsupported for a backend whose
/// tensors are not in host memory, which FFTW reads).
ExtensionModulePtr module_factory(const EagerExtensionTarget& target);

/// The node in the eager tier (install-ensure on first use) and the traced one.
EagerTensor apply(const FftParams& p, const EagerTensor& x);
TracedTensor apply(const FftParams& p, const TracedTensor& x);

}  // namespace tenferro::fft::detail
