#pragma once
// The einsum rows of our side of the peer suite (einsum_cases.cpp): group 2
// (abcd,dbef->acef at 32), overhead_einsum_2x2 (group 13) and group 8, the
// tensor-network instances of ../shared/einsum-instances contracted along
// their recorded paths, with the path's GEMMs through BLAS as the floor.

#include <functional>
#include <string>

#include "harness.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace bench_einsum {

/// Runs, checks and emits one of our cases (Suite::run of tenferro_bench.cpp).
using Runner = std::function<void(
    const std::string& name, const std::string& size, const std::string& variant,
    const std::function<tenferro::Tensor()>& op, const std::function<double(std::int64_t)>& ref)>;

/// Times `body` (BLAS called directly) and emits it as impl "blas": the
/// floor column of group 8's rows (the path's GEMMs alone).
using FloorRunner =
    std::function<void(const std::string& name, const std::string& size, const std::string& variant,
                       const std::function<void()>& body)>;

void run_cases(const bench::Options& o, tenferro::CpuBackend& cpu, const Runner& run,
               const FloorRunner& floor);

}  // namespace bench_einsum
