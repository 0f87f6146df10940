#pragma once
// Group 18 of our side of the peer suite: max-plus GEMM (tropical_cases.cpp).

#include <functional>
#include <string>

#include "harness.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace bench_tropical {

/// Times `body` and emits it as impl "blas": the floor column (OpenBLAS's
/// GEMM of the same size and dtype).
using FloorRunner =
    std::function<void(const std::string& name, const std::string& size, const std::string& variant,
                       const std::function<void()>& body)>;

/// Runs the selected cases; returns how many probed values differ from the
/// naive reference (each is reported on stderr).
int run_cases(const bench::Options& o, tenferro::CpuBackend& cpu, const FloorRunner& floor);

}  // namespace bench_tropical
