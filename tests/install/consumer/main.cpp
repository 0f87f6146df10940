// Out-of-tree consumer of an installed tenferro: a small direct-tier compute
// whose results are checked against hand-computed values. Exits 1 on mismatch.

#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include <tenferro/io/npy.hpp>
#include <tenferro/tenferro.hpp>

namespace tf = tenferro;

int main() {
  int failures = 0;
  auto expect = [&failures](const char* what, bool ok) {
    std::cout << what << ": " << (ok ? "ok" : "MISMATCH") << "\n";
    if (!ok) ++failures;
  };
  try {
    tf::CpuBackend cpu(tf::CpuBackendOptions{.num_threads = 1});

    auto a = tf::Tensor::from_row_major({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
    expect("from_row_major stores column-major",
           a.to_vector<double>() == std::vector<double>{1, 4, 2, 5, 3, 6});

    // Views: transpose and a negative-step slice alias a's storage.
    auto at = a.transpose();
    expect("transpose is a view", at.storage() == a.storage() && !at.is_contiguous());
    expect("transpose values",
           tf::allclose(at.contiguous(),
                        tf::Tensor::from_row_major({3, 2}, std::vector<double>{1, 4, 2, 5, 3, 6})));
    auto rev = a.slice(1, std::nullopt, std::nullopt, -1);
    expect("negative-step slice",
           tf::allclose(rev,
                        tf::Tensor::from_row_major({2, 3}, std::vector<double>{3, 2, 1, 6, 5, 4})));

    // Pooled allocation from the backend.
    auto e = cpu.empty({4, 4}, tf::f64);
    expect("backend empty", e.shape() == tf::Shape{4, 4} && e.dtype() == tf::f64);

    // One direct op through the installed library: I * a^T == a^T.
    auto p = tf::matmul(tf::eye(3), at, cpu);
    expect("matmul(eye(3), a^T)", p.shape() == tf::Shape{3, 2} && tf::allclose(p, at));

    // The linalg family from the installed library: direct, and eager with
    // AD (the family installs itself on the runtime's first call).
    auto spd = tf::Tensor::from_col_major({2, 2}, std::vector<double>{4, 2, 2, 3});
    auto l = tf::linalg::cholesky(spd, false, cpu);
    expect("cholesky", tf::allclose(l, tf::Tensor::from_col_major(
                                           {2, 2}, std::vector<double>{2, 1, 0, std::sqrt(2.0)})));
    auto rt = tf::EagerRuntime::make_cpu();
    auto x = rt->variable(spd);
    tf::sum(tf::linalg::cholesky(x)).backward();
    expect("cholesky gradient", x.grad().defined() && x.grad().shape() == tf::Shape{2, 2});

    // The FFT family (FFTW linked through the installed package): the DFT
    // of [1, 1, 1, 1] is [4, 0, 0, 0]; eager with AD.
    auto ones = tf::Tensor::from_col_major({4}, std::vector<double>{1, 1, 1, 1});
    auto spec = tf::fft::rfft(ones, std::nullopt, 0, "backward", cpu);
    expect("rfft", spec.shape() == tf::Shape{3} &&
                       std::abs(spec.to_vector<std::complex<double>>()[0] - 4.0) < 1e-12);
    auto y = rt->variable(ones);
    tf::sum(tf::abs(tf::fft::fft(y))).backward();
    expect("fft gradient", y.grad().defined() && y.grad().shape() == tf::Shape{4});

    // .npz through the installed io layer (zlib linked through the package):
    // a compressed round trip in memory-sized files.
    const auto npz = std::filesystem::temp_directory_path() / "tenferro_consumer_check.npz";
    tf::io::save_npz(npz, {{"a", a}}, /*compressed=*/true);
    const auto back = tf::io::load_npz(npz);
    std::filesystem::remove(npz);
    expect("npz round trip", back.at("a").shape() == a.shape() &&
                                 back.at("a").to_vector<double>() == a.to_vector<double>());

    // Typed errors cross the library boundary intact.
    try {
      (void)a.reshape({4, 2});
      expect("reshape to a wrong size throws", false);
    } catch (const tf::Error& err) {
      expect("error kind ShapeMismatch", err.kind() == tf::ErrorKind::ShapeMismatch);
    }
  } catch (const std::exception& ex) {
    std::cerr << "tenferro consumer: unexpected exception: " << ex.what() << "\n";
    return 1;
  }
  std::cout << (failures == 0 ? "tenferro consumer: ok\n" : "tenferro consumer: FAILED\n");
  return failures == 0 ? 0 : 1;
}
