// The FFT mappings: torch.fft ops onto tenferro::fft. A PyTorch dim d of a
// rank-r tensor is our axis r - 1 - d; a dim list maps element-wise and is
// reversed (with s), so PyTorch's halved last dim is our first listed axis.

#include <array>

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

// Every torch.fft transform, by name: the one-axis transforms (input, n,
// dim, norm) and the n-dimensional ones (input, s, dim, norm), whose "2"
// forms are the same function with PyTorch's default dims (-2, -1). One table
// entry per transform of include/tenferro/fft/fft.hpp; the replay test checks
// that every name is mapped.
template <class T>
struct Transforms {
  using One = T (*)(const T&, std::optional<std::int64_t>, std::int64_t, std::string_view);
  using Many = T (*)(const T&, const fft::Lengths&, const Axes&, std::string_view);
  struct Entry {
    std::string_view name;
    One one = nullptr;
    Many many = nullptr;
  };
  static constexpr std::array<Entry, 6> one_axis = {{{"fft", &fft::fft<T>},
                                                     {"ifft", &fft::ifft<T>},
                                                     {"rfft", &fft::rfft<T>},
                                                     {"irfft", &fft::irfft<T>},
                                                     {"hfft", &fft::hfft<T>},
                                                     {"ihfft", &fft::ihfft<T>}}};
  static constexpr std::array<Entry, 6> n_axes = {{{"fftn", nullptr, &fft::fftn<T>},
                                                   {"ifftn", nullptr, &fft::ifftn<T>},
                                                   {"rfftn", nullptr, &fft::rfftn<T>},
                                                   {"irfftn", nullptr, &fft::irfftn<T>},
                                                   {"hfftn", nullptr, &fft::hfftn<T>},
                                                   {"ihfftn", nullptr, &fft::ihfftn<T>}}};
};

}  // namespace

template <class T>
MultiFn<T> build_fft(const Case& c) {
  std::string_view op = c.op;
  if (!op.starts_with("fft_")) return {};
  op.remove_prefix(4);
  for (const auto& e : Transforms<T>::one_axis) {
    if (op == e.name) {
      const auto f = e.one;
      return one_axis<T>(c, [f](const T& x, std::optional<std::int64_t> n, std::int64_t a,
                                const std::string& m) { return f(x, n, a, m); });
    }
  }
  const bool two = op.ends_with('2');
  if (two) op.remove_suffix(1);
  for (const auto& e : Transforms<T>::n_axes) {
    // fft2 is fftn with two default dims: strip the 2, then the table's n.
    if (two ? e.name.substr(0, e.name.size() - 1) == op : e.name == op) {
      const auto f = e.many;
      return n_axes<T>(
          c,
          [f](const T& x, const fft::Lengths& s, const Axes& a, const std::string& m) {
            return f(x, s, a, m);
          },
          two);
    }
  }
  return {};
}

std::vector<std::string> fft_names() {
  std::vector<std::string> out;
  for (const auto& e : Transforms<EagerTensor>::one_axis)
    out.push_back("fft_" + std::string(e.name));
  for (const auto& e : Transforms<EagerTensor>::n_axes) {
    const std::string n(e.name);
    out.push_back("fft_" + n);
    out.push_back("fft_" + n.substr(0, n.size() - 1) + "2");
  }
  return out;
}

template MultiFn<EagerTensor> build_fft<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_fft<TracedTensor>(const Case&);

}  // namespace replay
