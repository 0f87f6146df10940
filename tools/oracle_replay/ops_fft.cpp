// The FFT mappings: torch.fft ops onto tenferro::fft. A PyTorch dim d of a
// rank-r tensor is our axis r - 1 - d; a dim list maps element-wise and is
// reversed (with s), so PyTorch's halved last dim is our first listed axis.

#include "ops.hpp"
#include "tenferro/fft/fft.hpp"

namespace replay {

using namespace tenferro;

namespace {

std::int64_t torch_dim_to_axis(std::int64_t d, std::int64_t rank) {
  return rank - 1 - (d < 0 ? d + rank : d);
}

std::string arg_norm(const Case& c, int pos) {
  const Json* v = arg(c, "norm", pos);
  return v ? v->get<std::string>() : "backward";
}

template <class T, class F>
MultiFn<T> one_axis(const Case& c, F f) {
  std::optional<std::int64_t> n;
  if (const Json* v = arg(c, "n", 0)) n = v->get<std::int64_t>();
  std::int64_t dim = -1;
  if (const Json* v = arg(c, "dim", 1)) dim = v->get<std::int64_t>();
  const std::string norm = arg_norm(c, 2);
  return [=](std::span<const T> x) {
    return std::vector<T>{f(x[0], n, torch_dim_to_axis(dim, x[0].rank()), norm)};
  };
}

// fftn-style: (input, s, dim, norm); `two` gives PyTorch's default dim (-2, -1).
template <class T, class F>
MultiFn<T> n_axes(const Case& c, F f, bool two) {
  std::vector<std::int64_t> s, dims;
  if (const Json* v = arg(c, "s", 0)) s = v->get<std::vector<std::int64_t>>();
  bool have_dims = false;
  if (const Json* v = arg(c, "dim", 1)) {
    have_dims = true;
    dims = v->is_array() ? v->get<std::vector<std::int64_t>>()
                         : std::vector<std::int64_t>{v->get<std::int64_t>()};
  }
  if (!have_dims && two) {
    dims = {-2, -1};
    have_dims = true;
  }
  const std::string norm = arg_norm(c, 2);
  return [=](std::span<const T> x) {
    const std::int64_t r = x[0].rank();
    Axes axes;
    fft::Lengths lengths(s.rbegin(), s.rend());
    if (have_dims) {
      for (auto it = dims.rbegin(); it != dims.rend(); ++it)
        axes.push_back(torch_dim_to_axis(*it, r));
    } else if (!s.empty()) {
      // PyTorch: the last s.size() dims, i.e. our first s.size() axes.
      for (std::int64_t a = 0; a < static_cast<std::int64_t>(s.size()); ++a) axes.push_back(a);
    }
    return std::vector<T>{f(x[0], lengths, axes, norm)};
  };
}

}  // namespace

template <class T>
MultiFn<T> build_fft(const Case& c) {
  const std::string& op = c.op;
  using N = std::optional<std::int64_t>;
  using L = fft::Lengths;
  if (op == "fft_fft")
    return one_axis<T>(c, [](const T& x, N n, std::int64_t a, const std::string& m) {
      return fft::fft(x, n, a, m);
    });
  if (op == "fft_ifft")
    return one_axis<T>(c, [](const T& x, N n, std::int64_t a, const std::string& m) {
      return fft::ifft(x, n, a, m);
    });
  if (op == "fft_rfft")
    return one_axis<T>(c, [](const T& x, N n, std::int64_t a, const std::string& m) {
      return fft::rfft(x, n, a, m);
    });
  if (op == "fft_irfft")
    return one_axis<T>(c, [](const T& x, N n, std::int64_t a, const std::string& m) {
      return fft::irfft(x, n, a, m);
    });
  if (op == "fft_hfft")
    return one_axis<T>(c, [](const T& x, N n, std::int64_t a, const std::string& m) {
      return fft::hfft(x, n, a, m);
    });
  if (op == "fft_ihfft")
    return one_axis<T>(c, [](const T& x, N n, std::int64_t a, const std::string& m) {
      return fft::ihfft(x, n, a, m);
    });
  const bool two = op.size() > 1 && op.back() == '2';
  if (op == "fft_fftn" || op == "fft_fft2")
    return n_axes<T>(
        c,
        [](const T& x, const L& s, const Axes& a, const std::string& m) {
          return fft::fftn(x, s, a, m);
        },
        two);
  if (op == "fft_ifftn" || op == "fft_ifft2")
    return n_axes<T>(
        c,
        [](const T& x, const L& s, const Axes& a, const std::string& m) {
          return fft::ifftn(x, s, a, m);
        },
        two);
  if (op == "fft_rfftn" || op == "fft_rfft2")
    return n_axes<T>(
        c,
        [](const T& x, const L& s, const Axes& a, const std::string& m) {
          return fft::rfftn(x, s, a, m);
        },
        two);
  if (op == "fft_irfftn" || op == "fft_irfft2")
    return n_axes<T>(
        c,
        [](const T& x, const L& s, const Axes& a, const std::string& m) {
          return fft::irfftn(x, s, a, m);
        },
        two);
  return {};
}

template MultiFn<EagerTensor> build_fft<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_fft<TracedTensor>(const Case&);

}  // namespace replay
