#pragma once
// The linalg groups of our side of the peer suite (linalg_cases.cpp).

#include <functional>
#include <string>

#include "harness.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace bench_linalg {

/// Runs, checks and emits one of our cases (Suite::run of tenferro_bench.cpp).
using Runner = std::function<void(
    const std::string& name, const std::string& size, const std::string& variant,
    const std::function<tenferro::Tensor()>& op, const std::function<double(std::int64_t)>& ref)>;
/// Times `body` (LAPACK called directly) and emits it as impl "lapack": the
/// floor column of the row.
using FloorRunner =
    std::function<void(const std::string& name, const std::string& size, const std::string& variant,
                       const std::function<void()>& body)>;

void run_cases(const bench::Options& o, tenferro::CpuBackend& cpu, const Runner& run,
               const FloorRunner& floor);

}  // namespace bench_linalg
