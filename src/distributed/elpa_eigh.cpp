// ELPA's one-stage eigensolver behind dist::linalg::eigh (scalapack.hpp's
// elpa_eigh): one handle per call, made and freed collectively. Per call
// rather than cached, since elpa_setup splits communicators that must be
// freed before MPI_Finalize, and its cost is small beside the solve.

#include <complex>
#include <mutex>
#include <string>

#include "distributed/scalapack.hpp"

#ifdef TENFERRO_HAVE_ELPA
#include <elpa/elpa.h>
#endif

namespace tenferro::dist::linalg {

bool has_elpa() {
#ifdef TENFERRO_HAVE_ELPA
  return true;
#else
  return false;
#endif
}

}  // namespace tenferro::dist::linalg

namespace tenferro::dist::detail {

#ifdef TENFERRO_HAVE_ELPA

namespace {

/// elpa_init once per process (the API version this header was written for).
int elpa_ready() {
  static const int status = elpa_init(ELPA_API_VERSION);
  return status;
}

}  // namespace

template <class S>
int elpa_eigh(MPI_Comm comm, const BlockCyclicLayout& layout, std::int64_t n, S* a, double* w, S* z,
              std::int64_t local_rows, std::int64_t local_cols) {
  if (const int status = elpa_ready(); status != ELPA_OK) return status;
  int err = ELPA_OK;
  elpa_t e = elpa_allocate(&err);
  if (err != ELPA_OK) return err;
  const auto set = [&](const char* name, std::int64_t value) {
    if (err == ELPA_OK) elpa_set_integer(e, name, static_cast<int>(value), &err);
  };
  set("na", n);
  set("nev", n);
  set("local_nrows", local_rows);
  set("local_ncols", local_cols);
  set("nblk", layout.block);
  set("mpi_comm_parent", MPI_Comm_c2f(comm));
  set("process_row", layout.grid.row);
  set("process_col", layout.grid.col);
  // Every rank sets the same values, so every rank reaches elpa_setup (which
  // is collective) or none does.
  if (err == ELPA_OK) err = elpa_setup(e);
  set("solver", ELPA_SOLVER_1STAGE);
  if (err == ELPA_OK) {
    if constexpr (std::is_same_v<S, double>) {
      elpa_eigenvectors_a_h_a_d(e, a, w, z, &err);
    } else {
      elpa_eigenvectors_a_h_a_dc(e, a, w, z, &err);
    }
  }
  int freed = ELPA_OK;
  elpa_deallocate(e, &freed);
  return err;
}

// From the header's list: elpa.h declares elpa_strerr with C++ linkage,
// which the library (C) does not export under that name.
std::string elpa_error_text(int code) {
#define TENFERRO_ELPA_ERROR_NAME(name, value) \
  if (code == (value)) return #name;
  ELPA_FOR_ALL_ERRORS(TENFERRO_ELPA_ERROR_NAME)
#undef TENFERRO_ELPA_ERROR_NAME
  return "ELPA error " + std::to_string(code);
}

#else

template <class S>
int elpa_eigh(MPI_Comm, const BlockCyclicLayout&, std::int64_t, S*, double*, S*, std::int64_t,
              std::int64_t) {
  fail(ErrorKind::Internal, "dist::linalg::eigh", "ELPA called in a build without it");
  return -1;
}

std::string elpa_error_text(int code) {
  return "ELPA error " + std::to_string(code);
}

#endif

template int elpa_eigh<double>(MPI_Comm, const BlockCyclicLayout&, std::int64_t, double*, double*,
                               double*, std::int64_t, std::int64_t);
template int elpa_eigh<std::complex<double>>(MPI_Comm, const BlockCyclicLayout&, std::int64_t,
                                             std::complex<double>*, double*, std::complex<double>*,
                                             std::int64_t, std::int64_t);

}  // namespace tenferro::dist::detail
