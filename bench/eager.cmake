# Eager-tier overhead micro-benchmarks (Google Benchmark).
add_executable(bench_eager_overhead ${CMAKE_CURRENT_LIST_DIR}/eager_overhead_bench.cpp)
target_link_libraries(bench_eager_overhead PRIVATE tenferro::tenferro benchmark::benchmark tenferro_options)
