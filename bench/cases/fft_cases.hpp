#pragma once
// Group 12 (FFT) of our side of the peer suite (fft_cases.cpp).

#include <functional>
#include <string>

#include "harness.hpp"
#include "linalg_cases.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace bench_fft {

/// Runs, checks and emits one of our cases; `ref(q)` is the naive value at
/// flat position q of the result's memory (a complex result is read as
/// interleaved real and imaginary parts).
using Runner = bench_linalg::Runner;
/// Times `body` (FFTW called directly) and emits it as impl "fftw": the
/// floor column of the row.
using FloorRunner = bench_linalg::FloorRunner;

void run_cases(const bench::Options& o, tenferro::CpuBackend& cpu, const Runner& run,
               const FloorRunner& floor);

}  // namespace bench_fft
