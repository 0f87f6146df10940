# Traced-tier benchmarks: fused elementwise chains against direct ops, and
# prepare/run costs of a small and a large program.
add_executable(bench_traced_fusion ${CMAKE_CURRENT_LIST_DIR}/traced_fusion_bench.cpp)
target_link_libraries(bench_traced_fusion PRIVATE tenferro::tenferro benchmark::benchmark
                      tenferro_options)
