#pragma once
// The linalg groups of our side of the peer suite (linalg_cases.cpp).

#include <functional>
#include <string>
#include <vector>

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

/// As Runner, for a case with several results (a traced program's outputs),
/// checked as their flat memories one after another (Suite::run_many).
using ManyRunner =
    std::function<void(const std::string& name, const std::string& size, const std::string& variant,
                       const std::function<std::vector<tenferro::Tensor>()>& op,
                       const std::function<double(std::int64_t)>& ref)>;

void run_cases(const bench::Options& o, tenferro::CpuBackend& cpu, const Runner& run,
               const FloorRunner& floor);
/// Group 10's traced rows: jvp and vjp of prepared programs.
void run_traced_cases(const bench::Options& o, const ManyRunner& run_many);

}  // namespace bench_linalg
