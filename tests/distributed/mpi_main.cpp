// The distributed suite's main: every rank runs every test in the same
// order (SPMD); rank 0 prints (every rank with TENFERRO_MPI_ALL_PRINT set,
// e.g. under mpirun --output-filename DIR); the job fails when any rank saw
// a failure.
// Run under mpirun -np 1, 2 and 4 (tests/CMakeLists.txt).

#include <gtest/gtest.h>

#include <cstdlib>

#include "tenferro/distributed/distributed.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  tenferro::dist::ensure_initialized();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0 && std::getenv("TENFERRO_MPI_ALL_PRINT") == nullptr) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int local = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (local != 0) std::fprintf(stderr, "rank %d: a test failed\n", rank);
  return any;
}
