#pragma once
// The FFT family (torch.fft semantics on FFTW3): complex, real-to-complex and
// complex-to-real discrete Fourier transforms over any axes, with n/s padding
// or truncation, the three norm modes, forward and reverse mode AD in both
// tiers, frequency grids and shifts. See docs/fft.md.
//
// Axes are ours (column-major; a PyTorch dim d of a rank-r tensor is our axis
// r - 1 - d); negative axes count from the last (-1 is axis rank - 1). The
// default axis of the one-dimensional transforms is 0, the fastest-varying
// axis (PyTorch's default dim=-1). For the real transforms over several axes
// (rfft2, rfftn, irfft2, irfftn, hfft2, hfftn, ihfft2, ihfftn) the FIRST
// listed axis is the halved one
// (PyTorch halves its last dim, which is our first axis once the dim list is
// mapped and reversed); s lists lengths in the order of the axes.
//
// Norm modes ("backward" default, "forward", "ortho") follow PyTorch: for a
// forward transform (fft, rfft, hfft and their n-axis forms) "backward" does not scale, "forward"
// scales by 1/N and "ortho" by 1/sqrt(N); an inverse transform (ifft, irfft,
// ihfft) scales by 1/N, 1 and 1/sqrt(N), where N is the product of the
// signal lengths. Anything else is InvalidArgument.
//
// Dtypes: f32, f64, c64, c128. Real inputs of complex transforms are promoted
// (f32 -> c64, f64 -> c128); rfft, rfftn and ihfft take real inputs only
// (DTypeMismatch for complex ones); integer and bool inputs are
// DTypeMismatch (convert first). A signal length below 1 is InvalidArgument;
// zero-size batch axes give zero-size results.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/backend/backend.hpp"

namespace tenferro::fft {

/// The tensor types of the AD tiers (EagerTensor, TracedTensor); Tensor
/// overloads (the direct tier) take a Backend as their last argument.
template <class T>
concept FftTensor = AdTensor<T>;

/// Signal lengths for the multi-axis transforms, one per axis (-1 keeps the
/// input's extent).
using Lengths = std::vector<std::int64_t>;

// ---- one axis -----------------------------------------------------------------------

/// The DFT along `axis`, X[k] = sum_j x[j] exp(-2 pi i j k / n). `n` pads
/// with zeros or truncates the axis first (default: its extent). Complex
/// result (real inputs promoted). torch.fft.fft.
template <FftTensor T>
T fft(const T& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = 0,
      std::string_view norm = "backward");
Tensor fft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis, std::string_view norm,
           Backend& backend);

/// The inverse DFT along `axis` (exponent +, scaled 1/n under "backward").
/// torch.fft.ifft.
template <FftTensor T>
T ifft(const T& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = 0,
       std::string_view norm = "backward");
Tensor ifft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
            std::string_view norm, Backend& backend);

/// The DFT of a real signal, its n / 2 + 1 non-negative frequencies along
/// `axis` (real input only). torch.fft.rfft.
template <FftTensor T>
T rfft(const T& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = 0,
       std::string_view norm = "backward");
Tensor rfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
            std::string_view norm, Backend& backend);

/// The inverse of rfft: the real signal of length n (default 2 (m - 1) for
/// m input frequencies) whose half spectrum is x (padded or truncated to
/// n / 2 + 1). The imaginary parts of the zero (and, for even n, Nyquist)
/// frequency are ignored, as in PyTorch. torch.fft.irfft.
template <FftTensor T>
T irfft(const T& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = 0,
        std::string_view norm = "backward");
Tensor irfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
             std::string_view norm, Backend& backend);

/// The real DFT of a Hermitian-symmetric signal given by its first half
/// (a forward transform: irfft of conj(x) with the norm modes swapped).
/// torch.fft.hfft.
template <FftTensor T>
T hfft(const T& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = 0,
       std::string_view norm = "backward");
Tensor hfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
            std::string_view norm, Backend& backend);

/// The inverse of hfft: conj(rfft(x)) scaled as an inverse transform (real
/// input only). torch.fft.ihfft.
template <FftTensor T>
T ihfft(const T& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t axis = 0,
        std::string_view norm = "backward");
Tensor ihfft(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
             std::string_view norm, Backend& backend);

// ---- several axes -------------------------------------------------------------------

/// The DFT over `axes` (empty: every axis, or the first s.size() axes when s
/// is given), lengths `s` (empty: the extents). torch.fft.fftn.
template <FftTensor T>
T fftn(const T& x, const Lengths& s = {}, const Axes& axes = {},
       std::string_view norm = "backward");
Tensor fftn(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
            Backend& backend);

/// The inverse DFT over `axes` (see fftn). torch.fft.ifftn.
template <FftTensor T>
T ifftn(const T& x, const Lengths& s = {}, const Axes& axes = {},
        std::string_view norm = "backward");
Tensor ifftn(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
             Backend& backend);

/// The DFT of a real tensor over `axes`, halving the first of them (see the
/// file comment). torch.fft.rfftn.
template <FftTensor T>
T rfftn(const T& x, const Lengths& s = {}, const Axes& axes = {},
        std::string_view norm = "backward");
Tensor rfftn(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
             Backend& backend);

/// The inverse of rfftn: a real tensor whose first listed axis has length
/// s[0] (default 2 (m - 1)). torch.fft.irfftn.
template <FftTensor T>
T irfftn(const T& x, const Lengths& s = {}, const Axes& axes = {},
         std::string_view norm = "backward");
Tensor irfftn(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
              Backend& backend);

/// The real DFT over `axes` of a Hermitian-symmetric signal given by its
/// half along the FIRST listed axis (the one halved, as in irfftn): a
/// forward transform whose result is real, with that axis of length s[0]
/// (default 2 (m - 1)). Equals irfftn(conj(x)) times N under "backward" (the
/// norm modes swapped). torch.fft.hfftn.
template <FftTensor T>
T hfftn(const T& x, const Lengths& s = {}, const Axes& axes = {},
        std::string_view norm = "backward");
Tensor hfftn(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
             Backend& backend);

/// The inverse of hfftn: the half (along the first listed axis) of the
/// inverse DFT of a real tensor, conj(rfftn(x)) / N under "backward" (real
/// input only). torch.fft.ihfftn.
template <FftTensor T>
T ihfftn(const T& x, const Lengths& s = {}, const Axes& axes = {},
         std::string_view norm = "backward");
Tensor ihfftn(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
              Backend& backend);

/// fftn over two axes (default {0, 1}). torch.fft.fft2.
template <FftTensor T>
T fft2(const T& x, const Lengths& s = {}, const Axes& axes = {0, 1},
       std::string_view norm = "backward");
Tensor fft2(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
            Backend& backend);
/// ifftn over two axes (default {0, 1}). torch.fft.ifft2.
template <FftTensor T>
T ifft2(const T& x, const Lengths& s = {}, const Axes& axes = {0, 1},
        std::string_view norm = "backward");
Tensor ifft2(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
             Backend& backend);
/// rfftn over two axes (default {0, 1}; axis 0 is halved). torch.fft.rfft2.
template <FftTensor T>
T rfft2(const T& x, const Lengths& s = {}, const Axes& axes = {0, 1},
        std::string_view norm = "backward");
Tensor rfft2(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
             Backend& backend);
/// irfftn over two axes (default {0, 1}). torch.fft.irfft2.
template <FftTensor T>
T irfft2(const T& x, const Lengths& s = {}, const Axes& axes = {0, 1},
         std::string_view norm = "backward");
Tensor irfft2(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
              Backend& backend);
/// hfftn over two axes (default {0, 1}; axis 0 is the halved one).
/// torch.fft.hfft2.
template <FftTensor T>
T hfft2(const T& x, const Lengths& s = {}, const Axes& axes = {0, 1},
        std::string_view norm = "backward");
Tensor hfft2(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
             Backend& backend);
/// ihfftn over two axes (default {0, 1}). torch.fft.ihfft2.
template <FftTensor T>
T ihfft2(const T& x, const Lengths& s = {}, const Axes& axes = {0, 1},
         std::string_view norm = "backward");
Tensor ihfft2(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,
              Backend& backend);

// ---- in place (eager only) ----------------------------------------------------------

/// The DFT (or with `inverse` the inverse DFT) along `axis` written into x's
/// own storage, for an untracked, compact c64 / c128 eager tensor that is the
/// only owner of its storage; returns it as an untracked tensor (x is moved
/// from). Never copies: a tensor that requires grad, has history, or is used
/// inside a capture scope is RuntimeState (x unchanged), as is one whose
/// storage is shared; a strided tensor is InvalidArgument. Norm modes as fft.
EagerTensor fft_inplace(EagerTensor&& x, std::int64_t axis = 0, std::string_view norm = "backward",
                        bool inverse = false);

// ---- planning: effort, threads, wisdom -----------------------------------------------
//
// Each transform runs an FFTW plan kept in the runtime's extension cache
// (family "tenferro.fft_transform.v1", cache "fftw_plans"), keyed by the
// transform, its layout, precision, planning effort, thread count and the
// SIMD alignment of the arrays. Transforms of at least 2^15 elements are
// planned with the backend's thread count (CpuBackend::num_threads), smaller
// ones with one thread. Plan creation and wisdom calls are serialised (FFTW's
// planner is not thread-safe); running transforms is not.

/// How hard FFTW searches for a fast plan when a transform is first seen:
/// Estimate (default) picks one by heuristics at no cost; Measure times
/// candidates (tens of milliseconds to seconds per new shape, faster plans);
/// Patient times many more. Results are identical up to rounding.
enum class PlanningEffort : std::uint8_t { Estimate, Measure, Patient };

/// The planning effort of the calling thread (Estimate unless a
/// PlanningEffortScope is alive on it).
PlanningEffort planning_effort();

/// Sets the calling thread's planning effort while it lives (RAII, nests;
/// the previous effort comes back on destruction). The effort is part of the
/// plan key, so plans of another effort are not reused. A value outside the
/// enum is InvalidArgument.
class PlanningEffortScope {
 public:
  explicit PlanningEffortScope(PlanningEffort effort);
  ~PlanningEffortScope();
  PlanningEffortScope(const PlanningEffortScope&) = delete;
  PlanningEffortScope& operator=(const PlanningEffortScope&) = delete;

 private:
  PlanningEffort previous_;
};

/// FFTW's accumulated wisdom (the measured plans of both precisions) as
/// text, to be saved and imported by a later process so that Measure or
/// Patient planning is instant there. FFTW's wisdom is process-wide.
std::string export_wisdom();
/// Adds wisdom from export_wisdom() of the same FFTW version. Anything else
/// (empty, not wisdom, from another version) is InvalidArgument.
void import_wisdom(std::string_view wisdom);
/// export_wisdom() written to `path` (InvalidArgument if it cannot be written).
void export_wisdom_to_file(const std::string& path);
/// import_wisdom() of the file at `path` (InvalidArgument if it cannot be
/// read or does not hold wisdom).
void import_wisdom_from_file(const std::string& path);
/// Drops all of FFTW's wisdom (plans already made stay valid).
void forget_wisdom();

// ---- frequencies and shifts ---------------------------------------------------------

/// The sample frequencies of an n-point DFT with sample spacing d:
/// [0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (d n), a rank-1 tensor of
/// the real dtype `dtype` (f32 or f64). n < 0 is InvalidArgument.
/// torch.fft.fftfreq.
Tensor fftfreq(std::int64_t n, double d = 1.0, DType dtype = DType::F64);
/// The n / 2 + 1 non-negative frequencies of rfft: [0, 1, ..., n / 2] / (d n).
/// torch.fft.rfftfreq.
Tensor rfftfreq(std::int64_t n, double d = 1.0, DType dtype = DType::F64);

/// Rolls each of `axes` (empty: every axis) by extent / 2, moving the zero
/// frequency to the centre. torch.fft.fftshift.
template <FftTensor T>
T fftshift(const T& x, const Axes& axes = {});
Tensor fftshift(const Tensor& x, const Axes& axes, Backend& backend);
/// The inverse of fftshift (rolls by -(extent / 2)). torch.fft.ifftshift.
template <FftTensor T>
T ifftshift(const T& x, const Axes& axes = {});
Tensor ifftshift(const Tensor& x, const Axes& axes, Backend& backend);

}  // namespace tenferro::fft
