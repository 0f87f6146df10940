#pragma once
// Group 16 of our side of the peer suite: cumsum and sort/topk (scan_sort_cases.cpp).

#include <functional>
#include <string>

#include "harness.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace bench_scan_sort {

/// Runs, checks and emits one of our cases (Suite::run of tenferro_bench.cpp).
using Runner = std::function<void(
    const std::string& name, const std::string& size, const std::string& variant,
    const std::function<tenferro::Tensor()>& op, const std::function<double(std::int64_t)>& ref)>;

void run_cases(tenferro::CpuBackend& cpu, const Runner& run);

}  // namespace bench_scan_sort
