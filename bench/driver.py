#!/usr/bin/python3
"""Runs the side-by-side benchmark suite and writes bench/results/latest.{md,json,png}.

    /usr/bin/python3 bench/driver.py --build-dir build-bench [--quick] [--out bench/results]
                                     [--only GROUP[,GROUP...]] [--stem NAME]

--only runs only the groups whose number is GROUP (`--only 15`), or whose name
starts with GROUP when it is not a number (`--only "15 special"`); its files
are named group-<GROUPS>.{md,json,png} (e.g. group-15.*), so a partial run
never replaces latest.*. --stem NAME names the files NAME.* instead.

Called by `./run bench`. Every implementation runs in its own child process,
sequentially, with the same thread and malloc environment. Results of each
peer are checked against ours (sum and five probed values of the result);
mismatches are printed loudly and marked in the table. See docs/performance.md.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = "/usr/bin/python3"
PEERS = ["libtorch", "torch", "numpy"]
IMPLS = ["tenferro"] + PEERS

# Same for every side: glibc returns big blocks to the OS only above these, so
# fresh 8-32 MiB outputs come from the heap instead of a fresh mmap per call.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824"}

# (case, size, variant, threads, group). Stable ids; tenferro rows that are
# not implemented yet are in PENDING below.
CASES = []
for n in ("256", "1024"):
    CASES += [("matmul", n, "", 1, "1 matmul"), ("matmul", n, "", 2, "1 matmul")]
CASES += [("einsum_abcd_dbef_acef", "32", "", t, "2 einsum") for t in (1, 2)]
CASES += [("einsum_sliced_abc_cde_efa_bdf", "20", "", t, "2 einsum") for t in (1, 2)]
CASES += [("batched_matmul", s, "", 1, "3 batched matmul") for s in ("4x4x1024", "16x16x256")]
for t in (1, 2):
    for lg in ("2^20", "2^22"):
        for op in ("add", "mul"):
            CASES += [(op, lg, v, t, "4 elementwise") for v in ("fresh", "into")]
    # light ops beyond the cache (streamed through blocks, cpu/stream_store.hpp)
    CASES += [(c, "2^22", v, t, "4 elementwise")
              for c, v in (("neg", "into"), ("copy", "into"), ("where", "fresh"),
                           ("axpy", "eager"), ("axpy", "traced"))]
CASES += [("tanh_chain", "2^20", v, 1, "5 tanh chain") for v in ("eager", "traced")]
CASES += [(c, "2048x2048", "", t, "6 reductions")
          for t in (1, 2) for c in ("sum_all", "sum_axis0", "sum_axis1", "max_all")]
CASES += [("permute", s, "", 1, "7 permutation") for s in ("2048x2048", "256x256x64", "3^15")]
CASES += [(c, s, loss, 1, "11 jvp/vjp") for s, loss in (("256", "tanh_Ax"), ("2^16", "expsin_x"))
          for c in ("jvp_traced", "vjp_traced")]
# Group 8: tensor networks of ../shared/einsum-instances along their recorded
# paths (size = operand count); see bench/cases/einsum_cases.cpp. The floor
# column is the path's GEMMs alone through cblas_dgemm, reading the inputs in
# their own memory (records of impl "blas").
CASES += [(c, s, "recorded", 1, "8 tensor networks")
          for c, s in (("str_matrix_chain_multiplication_100", "100"),
                       ("str_mps_varying_inner_product_200", "200"),
                       ("lm_batch_likelihood_sentence_4_4d", "84"),
                       ("nary_matmul_chain_64", "3"))]
# MERA (4.6e10 multiply-adds along the recorded path, about 3 s a call on one
# thread) on both threads, timed as a slow case (harness.hpp: 5 samples, 3
# with --quick).
CASES += [("str_nw_mera_closed_120", "120", "recorded", 2, "8 tensor networks")]
CASES += [("overhead_add_untracked", "4", "", 1, "13 overhead"),
          ("overhead_add_recorded", "4", "", 1, "13 overhead"),
          ("overhead_chain_fwd_bwd", "4", "", 1, "13 overhead")]
CASES += [("overhead_grad_matmul", s, "", 1, "13 overhead") for s in ("2", "64", "512")]
CASES += [("overhead_small_program", "4", v, 1, "13 overhead") for v in ("eager", "prepared")]
CASES += [("overhead_extension_call", "4", "", 1, "13 overhead"),
          ("overhead_einsum_2x2", "2", "", 1, "13 overhead")]
# Group 15: direct special-function kernels, eager composite activations
# (untracked), and binary logaddexp; inputs in each op's domain (harness.hpp).
CASES += [(c, "2^20", "direct", 1, "15 special/activations")
          for c in ("lgamma", "digamma", "erfinv", "i0e", "log_ndtr")]
CASES += [(c, "2^20", "eager", 1, "15 special/activations")
          for c in ("softplus", "silu", "logsigmoid")]
CASES += [("logaddexp", "2^20", "direct", 1, "15 special/activations")]
# Groups 9 and 10: linalg forward (256 and 4096 matrices of 8x8) and reverse AD
# at 256, f64. The floor column is the same LAPACK driver called directly
# (records of impl "lapack" from our binary).
for t in (1, 2):
    CASES += [("cholesky", "256", "", t, "9 linalg"), ("qr", "256", "", t, "9 linalg")]
    CASES += [("solve", "256", v, t, "9 linalg") for v in ("1rhs", "16rhs")]
    CASES += [(c, "256", v, t, "9 linalg") for c in ("svd", "eigh") for v in ("values", "full")]
# c128 at 256: the same rows with variants "c128-..." (checked as interleaved
# real and imaginary memory, as group 12).
for t in (1, 2):
    CASES += [("cholesky", "256", "c128", t, "9 linalg"), ("qr", "256", "c128", t, "9 linalg")]
    CASES += [("solve", "256", v, t, "9 linalg") for v in ("c128-1rhs", "c128-16rhs")]
    CASES += [(c, "256", v, t, "9 linalg") for c in ("svd", "eigh")
              for v in ("c128-values", "c128-full")]
CASES += [("svd", "8x8x4096", "values", 1, "9 linalg"), ("eigh", "8x8x4096", "values", 1, "9 linalg"),
          ("qr", "8x8x4096", "", 1, "9 linalg"), ("solve", "8x8x4096", "1rhs", 1, "9 linalg")]
CASES += [(c, "256", "", 1, "10 linalg AD")
          for c in ("grad_svdvals_sum", "grad_eigvalsh_sum", "grad_solve_sum", "grad_qr_sum")]
# jvp and vjp of prepared traced programs (tenferro::jvp / vjp of the compiled
# loss; PyTorch: torch.autograd.functional.jvp / vjp).
CASES += [(c, "256", loss, 1, "10 linalg AD")
          for loss in ("svdvals_sum", "eigvalsh_sum", "qr_sum", "solve_sum")
          for c in ("jvp_traced", "vjp_traced")]
# Group 12: FFT (c128 unless named), the floor column is FFTW called
# directly with the same flags and layout (records of impl "fftw").
for t in (1, 2):
    CASES += [("fft", "2^20", "c128", t, "12 FFT"), ("rfft", "2^20", "f64", t, "12 FFT"),
              ("fft", "2^20", "c128-measure", t, "12 FFT"),
              ("rfft", "2^20", "f64-measure", t, "12 FFT"),
              ("fft", "1024x128", "axis0", t, "12 FFT"), ("fftn", "128^3", "c128", t, "12 FFT")]
# Group 16: cumsum along each axis, stable sorts and top-k (f64).
CASES += [(c, "2048x2048", "", 1, "16 scan/sort") for c in ("cumsum_axis0", "cumsum_axis1")]
CASES += [("sort", "2^20", "", 1, "16 scan/sort"), ("topk", "2^20", "k16", 1, "16 scan/sort"),
          ("sort_axis0", "1024x1024", "", 1, "16 scan/sort")]
# Group 17: the Python package against the same user code in PyTorch and
# NumPy, every side a Python child (bench/python/python_package_bench.py).
PY_GROUP = "17 python"
CASES += [(c, s, v, 1, PY_GROUP)
          for c, s, v in (("py_add_untracked", "4", ""), ("py_add_recorded_backward", "4", ""),
                          ("py_grad_matmul", "2", ""), ("py_einsum_2x2", "2", ""),
                          ("py_numpy_roundtrip", "2^20", ""), ("py_vmps", "L8D4", "lbfgs"),
                          ("py_vmps", "L8D4", "gd"))]
# Group 18: max-plus GEMM 1024^2 (C = max_k A + B) through the tropical kernel
# (src/einsum/semiring_gemm.hpp); peers as users write it (np.max /
# torch.amax of a broadcast sum over row blocks). The floor column is
# OpenBLAS's GEMM of the same size and dtype (records of impl "blas"): the
# same m n k element operations at the BLAS rate; issue 50 aims at half of it.
TROPICAL_GROUP = "18 tropical"
CASES += [("maxplus_gemm", "1024", v, t, TROPICAL_GROUP) for t in (1, 2) for v in ("f64", "f32")]
# The ground energy of an L = 16 +-1 spin glass: ours one max-plus einsum
# over the lattice's edge tensors (planned before the clock); peers a NumPy /
# PyTorch transfer-matrix dynamic program over 2^16 frontier states.
CASES += [("spinglass_ground", "16", "square", 1, TROPICAL_GROUP)]
ELEMENT_OPS = {("maxplus_gemm", "1024"): 1024**3}
# Group 19: the CTMRG gradient d(ln Z/N)/d beta of the 2D Ising model
# (examples/ctmrg_ising) through fixed_point (implicit differentiation)
# against backpropagation through the same unrolled iterations, and the
# forward alone ("value"): bench/cases/ctmrg_bench.cpp, eager, one thread,
# one process per cell for its peak RSS. No peers; its own table.
FIXED_POINT_GROUP = "19 fixed point"
FIXED_POINT_CHI = {False: ("16", "32"), True: ("8", "16")}  # by --quick
FIXED_POINT_VARIANTS = ("value", "implicit", "unrolled")
FIXED_POINT_TEMPERATURE = "2.3"  # near Tc: hundreds of iterations
# Group 20: sharded tensors on MPI (bench/cases/distributed_bench.cpp): a
# row-sharded matmul (n = 4096, --quick 1024), its gradient, a four-matrix
# chain einsum and the MPS and MERA networks of ../shared/einsum-instances
# (every operand sharded along its largest axis) on 2 ranks of one thread each
# (mpirun -np 2) against the same computation in one process with 1 and 2
# threads. Parallel efficiency = one process 1 thread / (2 x 2 ranks); ratio =
# one process 2 threads / 2 ranks. Next to the bytes a rank sent per call, the
# planner's bandwidth-optimal model of the steps it chose (the lower bound of
# the algorithm used); each rank result is checked against one process
# (relative 1e-10). Its own table.
DISTRIBUTED_GROUP = "20 distributed"
DISTRIBUTED_CASES = ("dist_matmul", "dist_matmul_grad", "dist_chain", "dist_einsum_mps",
                     "dist_einsum_mera")
DISTRIBUTED_TOLERANCE = 1e-10
DISTRIBUTED_RANKS = 2
# Group 21: distributed linear algebra on ScaLAPACK
# (bench/cases/distributed_linalg_bench.cpp): the reduced SVD, eigh of the
# symmetric part, its n/32 eigenpairs of largest |w| and the reduced QR of an
# n x n f64 Gaussian matrix (n = 2048, --quick 1024) on 2 ranks of one thread
# each, block-cyclic with 64 x 64 blocks on the 1x2 and on the 2x1 grid
# (dist::linalg: the SVD by gesdd's algorithm, pdgebrd + dbdsdc on every
# rank + pdormbr; eigh by ELPA where built, else pdsyevd; the truncated eigh
# gathers the kept vectors with a pdgemm; pdgeqrf + pdorgqr), against one
# process with 1 and 2 threads (tenferro::linalg: gesdd, syevd, geqrf +
# orgqr). Efficiency and ratio as group 20's, with the faster grid; the
# check: singular values and (kept) eigenvalues against one process,
# relative 1e-10, QR by reconstruction. Its own table.
DISTRIBUTED_LINALG_GROUP = "21 distributed linear algebra"
DISTRIBUTED_LINALG_CASES = ("dist_svd", "dist_eigh", "dist_eigh_truncated", "dist_qr")
DISTRIBUTED_LINALG_GRIDS = ("1x2", "2x1")
COMPILE_CASE = ("compile_time_matmul", "1 TU", "", 1, "14 compile time")

# Rows with no tenferro implementation yet, and the reason shown in the table.
PENDING_OURS = {}
# Rows whose peers compute exactly another row's result: the peers are not run
# again, their numbers (times and checks) are that row's.
PEER_ALIAS = {("tanh_chain", "2^20", "traced"): ("tanh_chain", "2^20", "eager"),
              ("overhead_small_program", "4", "prepared"): ("overhead_small_program", "4", "eager"),
              ("fft", "2^20", "c128-measure"): ("fft", "2^20", "c128"),
              ("rfft", "2^20", "f64-measure"): ("rfft", "2^20", "f64")}
# Cases of the issue not measured at all yet (no tenferro side, peers skipped).
PENDING_ALL = []
TWO_T_FLOPS = {("matmul", "256"): 2 * 256**3, ("matmul", "1024"): 2 * 1024**3,
               ("einsum_abcd_dbef_acef", "32"): 2 * 32**6,
               ("einsum_sliced_abc_cde_efa_bdf", "20"): 4 * 20**5}
# Implementations whose records are floors (a vendor library called directly
# by our binary): never checked, shown in the floor column.
FLOOR_IMPLS = ("lapack", "fftw", "stream", "blas")
# Groups of short kernel and overhead cells (microseconds to tens of
# milliseconds): the speed a shared virtual machine gives a process (memory
# bandwidth, and CPU time stolen by other guests) drifts by up to 2x within
# minutes, so one child per side, one after the other, compares different
# machines. These groups run ROUNDS rounds (2 with --quick), every side once
# per round, each round starting with another side; a cell is its best round
# (the lowest median), for every side alike.
# Every group but 8 (tensor networks: MERA takes seconds a call) and 14
# (compile time): the LAPACK, BLAS and FFTW rows call the same library on
# every side, so one process after the other measured the VM's drift, not the
# code (solve 256 1T: 823 us ours against libtorch's 537 in one run; 521
# against 540, with dgesv itself at 499, run back to back).
ROUND_GROUPS = ("1 matmul", "2 einsum", "3 batched matmul", "4 elementwise", "5 tanh chain",
                "6 reductions", "7 permutation", "9 linalg", "10 linalg AD", "12 FFT",
                "13 overhead", "15 special/activations", "16 scan/sort", PY_GROUP)
ROUNDS = 3
# Groups whose rows libtorch_ab also times in one process with libtorch,
# alternating blocks of calls (bench/peers/libtorch_ab.cpp): memory-bound rows,
# which move most from one process to the next on a shared machine.
AB_GROUPS = ("4 elementwise", "6 reductions")
# Memory floors: a copy that moves the same bytes (see peers.py floors()):
# NumPy's at 1T, PyTorch's `copy_` at 2T (NumPy copies on one thread).
# Other thread counts have no copy floor.
FLOOR_COPY_IMPL = {1: "numpy", 2: "torch"}
COPY_FLOOR = {("add", "2^20"): 3 << 19, ("mul", "2^20"): 3 << 19,
              ("add", "2^22"): 3 << 21, ("mul", "2^22"): 3 << 21, ("neg", "2^22"): 1 << 22,
              ("permute", "2048x2048"): 1 << 22, ("permute", "256x256x64"): 1 << 22,
              ("permute", "3^15"): 3**15}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def child_env(threads):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    env.update(MALLOC_ENV)
    return env


def run_child(label, cmd, threads, timeout):
    """Runs one implementation; returns its JSON records ([] on failure)."""
    log(f"--> {label} ({threads}T)")
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, env=child_env(threads), stdout=subprocess.PIPE, stderr=None,
                              text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        log(f"!!! {label}: timed out after {timeout}s; its column is n/a")
        return [], f"{label} timed out"
    recs = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            recs.append(json.loads(line))
    err = None
    if proc.returncode != 0:
        err = f"{label} ({threads}T) exited with status {proc.returncode}"
        log(f"!!! {err}")
    log(f"    {label}: {len(recs)} results in {time.time() - t0:.1f}s")
    return recs, err


def close(a, b):
    if a is None or b is None:
        return False
    return abs(a - b) <= 1e-7 * max(1.0, abs(a), abs(b))


def compile_times(build_dir, reps):
    """Case 14: wall time of `g++ -std=c++20 -O2 -c` of a user TU, median of reps."""
    out = []
    gxx = shutil.which("g++")
    torch_inc = Path("/usr/include/torch/csrc/api/include")
    tus = [("tenferro", ["-I", str(ROOT / "include")], ROOT / "bench/cases/compile_tu_tenferro.cpp")]
    if torch_inc.is_dir():
        tus.append(("libtorch", ["-isystem", str(torch_inc)],
                    ROOT / "bench/peers/compile_tu_torch.cpp"))
    obj = Path(build_dir) / "compile_tu.o"
    for impl, flags, src in tus:
        times = []
        for i in range(reps):
            log(f"--> compile time {impl} ({i + 1}/{reps})")
            t0 = time.perf_counter_ns()
            rc = subprocess.run([gxx, "-std=c++20", "-O2", *flags, "-c", str(src), "-o", str(obj)],
                                cwd=ROOT).returncode
            if rc != 0:
                log(f"!!! compile of {src.name} failed")
                break
            times.append(time.perf_counter_ns() - t0)
        if times:
            q = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
            out.append({"case": "compile_time_matmul", "size": "1 TU", "impl": impl,
                        "variant": "", "threads": 1, "median_ns": statistics.median(times),
                        "iqr_ns": q[2] - q[0]})
    obj.unlink(missing_ok=True)
    return out


def loadavg():
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


def wait_for_quiet(max_wait_s):
    """Other processes skew every cell: wait (bounded) for the 1-min load to drop."""
    limit = 0.5 * (os.cpu_count() or 2)
    t0 = time.time()
    load = loadavg()
    if load > limit:
        log(f"--> load average {load:.2f} > {limit:.1f}: waiting up to {max_wait_s}s for quiet")
    while load > limit and time.time() - t0 < max_wait_s:
        time.sleep(5)
        load = loadavg()
    return load


def fmt_time(ns):
    if ns is None:
        return "n/a"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def group_matches(group, only):
    """`only` items: a group number matches exactly ("1" is not "15"), any
    other text is a prefix of the group name."""
    if not only:
        return True
    number = group.split(" ", 1)[0]
    return any(number == item if item.isdigit() else group.startswith(item) for item in only)


def distributed_linalg_table(recs, errors):
    """Group 21's table: one process 1T and 2T, 2 ranks on each grid."""
    dr = {(r["case"], r["variant"], r["threads"]): r for r in recs}
    ranks = f"{DISTRIBUTED_RANKS} ranks"
    block = next((r["block"] for r in recs if "block" in r), "n/a")
    lines = ["", f"Group 21, distributed linear algebra on ScaLAPACK "
             f"(bench/cases/distributed_linalg_bench.cpp; f64 n x n on {DISTRIBUTED_RANKS} ranks "
             f"of one thread each, mpirun on this machine, {block} x {block} blocks, against one "
             f"process; median of 3 calls after a warm-up, or the first call alone where it took "
             "over 5 s, marked *): svd = reduced SVD of a Gaussian "
             "matrix (one process gesdd; ranks gesdd's algorithm: pdgebrd, dbdsdc on every rank, "
             "pdormbr), eigh = of its symmetric part (syevd; ELPA 1-stage where built, else "
             "pdsyevd), eigh_truncated = its n/32 eigenpairs of largest |w| (eigh, then the kept "
             "vectors gathered: index_select; a pdgemm by a 0/1 selection matrix), qr = reduced QR "
             "(geqrf + orgqr; pdgeqrf + pdorgqr). Each time on ranks is "
             "the slowest rank's, the faster grid in bold; efficiency = (1 process, 1 thread) / "
             "(ranks x time on the faster grid); ratio = (1 process, 2 threads) / (faster grid); "
             "check = the faster grid against one process (singular values / eigenvalues "
             "max |d| / max |ref|, qr max |QR - A| / max |A|), relative "
             f"{DISTRIBUTED_TOLERANCE:g}. The ranks and the two threads compete with whatever "
             "else runs on the machine: see the load above.", "",
             "| case | size | 1 process 1T | 1 process 2T | "
             + " | ".join(f"{ranks} {g}" for g in DISTRIBUTED_LINALG_GRIDS)
             + " | efficiency | ratio | check |",
             "|---|---|---|---|" + "---|" * len(DISTRIBUTED_LINALG_GRIDS) + "---|---|---|"]
    for case in DISTRIBUTED_LINALG_CASES:
        one, two = dr.get((case, "1 process", 1)), dr.get((case, "1 process", 2))
        grids = [dr.get((case, f"{ranks} {g}", DISTRIBUTED_RANKS))
                 for g in DISTRIBUTED_LINALG_GRIDS]
        shown = [g for g in grids if g]
        if not (one and two and shown):
            lines.append(f"| {case} | | n/a |" + " |" * (len(grids) + 5))
            continue
        best = min(shown, key=lambda g: g["median_ns"])
        for g in shown:
            if not 0 <= g.get("rel_diff", -1) <= DISTRIBUTED_TOLERANCE:
                errors.append(f"group 21 {case} {g['size']} on {g['grid']}: {ranks} differ "
                              f"from one process by {g.get('rel_diff', -1):.2e} ({g['check']})")
        diff = best.get("rel_diff", -1)
        check = (f"ok ({diff:.0e})" if 0 <= diff <= DISTRIBUTED_TOLERANCE
                 else f"MISMATCH ({diff:.1e})")
        if any(not 0 <= g.get("rel_diff", -1) <= DISTRIBUTED_TOLERANCE
               for g in shown if g is not best):
            check += "; other grid MISMATCH"
        def cell(g):
            text = fmt_time(g["median_ns"]) + ("*" if g.get("reps") == 1 else "")
            return f"**{text}**" if g is best else text
        cells = " | ".join(cell(g) if g else "n/a" for g in grids)
        lines.append(f"| {case} | {best['size']} | {cell(one)} | {cell(two)} | {cells} "
                     f"| {one['median_ns'] / (DISTRIBUTED_RANKS * best['median_ns']):.2f} "
                     f"| {two['median_ns'] / best['median_ns']:.2f} | {check} |")
    return lines


def run_distributed_group(binary, group, label, mode, timeout, errors):
    """A distributed group's records: `binary` as one process with 1 and 2
    threads, then on DISTRIBUTED_RANKS ranks of one thread under mpirun.
    A missing binary or mpirun, and failed children, go to `errors`."""
    mpirun = shutil.which("mpirun")
    if not binary.exists() or not mpirun:
        errors.append(f"{binary} or mpirun missing (MPI not found?): group {group} is n/a")
        return []
    out = []
    for t in (1, 2):
        recs, err = run_child(f"{label}, one process",
                              [str(binary), *mode, "--mode", "local", "--threads", str(t)], t,
                              timeout=timeout)
        out += recs
        if err:
            errors.append(err)
    os.environ.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                       "OMPI_MCA_btl_vader_single_copy_mechanism": "none"})
    recs, err = run_child(f"{label}, {DISTRIBUTED_RANKS} ranks",
                          [mpirun, "-np", str(DISTRIBUTED_RANKS), "--oversubscribe", str(binary),
                           *mode, "--mode", "dist"], 1, timeout=timeout)
    out += recs
    if err:
        errors.append(err)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=str(ROOT / "build-bench"))
    ap.add_argument("--out", default=str(ROOT / "bench/results"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--update-docs", action="store_true",
                    help="also copy the table into docs/performance.md (between its markers)")
    ap.add_argument("--only", default="",
                    help="comma-separated groups to run: a number (15) or a name prefix; "
                         "writes group-<GROUPS>.* instead of latest.*")
    ap.add_argument("--stem", default="",
                    help="file name stem of the outputs (default: latest, or group-<GROUPS> "
                         "with --only)")
    args = ap.parse_args()
    only = [g.strip() for g in args.only.split(",") if g.strip()]
    cases = [c for c in CASES if group_matches(c[4], only)]
    with_compile = group_matches(COMPILE_CASE[4], only) and not args.quick
    with_fixed_point = group_matches(FIXED_POINT_GROUP, only)
    with_distributed = group_matches(DISTRIBUTED_GROUP, only)
    with_distributed_linalg = group_matches(DISTRIBUTED_LINALG_GROUP, only)
    if (only and not cases and not with_compile and not with_fixed_point and not with_distributed
            and not with_distributed_linalg):
        ap.error(f"--only {args.only}: no group matches")
    if only and args.update_docs:
        ap.error("--update-docs needs the full run (it replaces the whole table); drop --only")
    stem = args.stem or ("group-" + "+".join(g.replace(" ", "_").replace("/", "_")
                                              for g in only) if only else "latest")
    pending_all = [p for p in PENDING_ALL if group_matches(p[0], only)]
    build = Path(args.build_dir)
    load_start = wait_for_quiet(10 if args.quick else 180)
    t_start = time.time()
    mode = ["--quick"] if args.quick else []

    ours = build / "bench/tenferro_bench"
    libtorch = build / "bench/peers/libtorch_bench"
    errors = []
    records = []
    rounds = 2 if args.quick else ROUNDS
    for threads, batch in ((1, "rounds"), (1, "once"), (2, "rounds"), (2, "once")):
        in_batch = [(c, s, v) for c, s, v, t, g in cases
                    if t == threads and (g in ROUND_GROUPS) == (batch == "rounds")
                    and g != PY_GROUP]
        ids = ",".join(f"{c}/{s}/{v}" for c, s, v in in_batch)
        py_ids = ",".join(f"{c}/{s}/{v}" for c, s, v, t, g in cases
                          if t == threads and g == PY_GROUP and (g in ROUND_GROUPS) ==
                          (batch == "rounds"))
        if not ids and not py_ids:
            continue  # a filtered run: no case at this thread count
        cmds = []
        if ours.exists():
            cmds.append(("tenferro", [str(ours), *mode, "--threads", str(threads), "--cases", ids]))
        elif f"{ours} missing: tenferro column is n/a" not in errors:
            errors.append(f"{ours} missing: tenferro column is n/a")
        if libtorch.exists():
            cmds.append(("libtorch", [str(libtorch), *mode, "--threads", str(threads), "--cases",
                                      ids]))
        # the memory floors (copies of the same bytes): numpy's copy at 1T,
        # torch's (split over the threads) at 2T
        floors = "".join(f",floor_copy/{n}/floor" for n in sorted(
            {COPY_FLOOR[(c, s)] for c, s, _ in in_batch if (c, s) in COPY_FLOOR}))
        for impl in ("torch", "numpy"):
            wanted = ids + (floors if impl == FLOOR_COPY_IMPL.get(threads) else "")
            cmds.append((impl, [PY, str(ROOT / "bench/python/peers.py"), "--impl", impl, *mode,
                                "--threads", str(threads), "--cases", wanted]))
        if not ids:
            cmds = []  # only group 17 at this thread count
        for impl in ("tenferro", "torch", "numpy") if py_ids else ():
            script = ROOT / "bench/python/python_package_bench.py"
            cmds.append((f"{impl} (python)", [PY, str(script), "--impl", impl, *mode, "--threads",
                                              str(threads), "--cases", py_ids, "--build-dir",
                                              str(build)]))
        n_rounds = rounds if batch == "rounds" else 1
        for r in range(n_rounds):
            order = cmds[r % len(cmds):] + cmds[:r % len(cmds)]
            for label, cmd in order:
                tag = f"{label}, round {r + 1}/{n_rounds}" if n_rounds > 1 else label
                recs, err = run_child(tag, cmd, threads, timeout=300)
                for rec in recs if n_rounds > 1 else ():
                    rec["round"] = r
                records += recs
                if err:
                    errors.append(err)
    if not libtorch.exists() and any(c[4] != PY_GROUP for c in cases):
        errors.append("libtorch peer not built (libtorch not found): libtorch column is n/a")

    # In-process A/B of the memory-bound rows (after the table's runs).
    ab = build / "bench/peers/libtorch_ab"
    ab_recs = []
    for threads in (1, 2):
        ids = ",".join(f"{c}/{s}/{v}" for c, s, v, t, g in cases
                       if t == threads and g in AB_GROUPS)
        if ids and ab.exists():
            recs, err = run_child("a/b with libtorch in one process",
                                  [str(ab), *mode, "--threads", str(threads), "--cases", ids],
                                  threads, timeout=300)
            ab_recs += recs
            if err:
                errors.append(err)

    # Group 19: one process per cell, so each peak RSS is the cell's own.
    fixed_point_recs = []
    ctmrg_bench = build / "bench/ctmrg_bench"
    if with_fixed_point and not ctmrg_bench.exists():
        errors.append(f"{ctmrg_bench} missing: group 19 is n/a")
    elif with_fixed_point:
        for chi in FIXED_POINT_CHI[args.quick]:
            for variant in FIXED_POINT_VARIANTS:
                recs, err = run_child(f"ctmrg gradient chi {chi} {variant}",
                                      [str(ctmrg_bench), *mode, "--chi", chi, "--variant", variant,
                                       "--temperature", FIXED_POINT_TEMPERATURE], 1, timeout=600)
                fixed_point_recs += recs
                if err:
                    errors.append(err)

    # Groups 20 and 21: one process with 1 and 2 threads, then 2 ranks under
    # mpirun (group 21: every grid of 2 ranks in one mpirun). The full runs'
    # 4096^2 matmul and gradient, and the decompositions of 2048^2 on a loaded
    # machine, take minutes per child.
    dist_timeout = 600 if args.quick else 1800
    distributed_recs = []
    if with_distributed:
        distributed_recs = run_distributed_group(build / "bench/distributed_bench", 20,
                                                 "distributed cases", mode, dist_timeout, errors)
    dist_linalg_recs = []
    if with_distributed_linalg:
        dist_linalg_recs = run_distributed_group(build / "bench/distributed_linalg_bench", 21,
                                                 "distributed linalg", mode, dist_timeout, errors)

    # Case 14 compiles libtorch headers (~20 s a sample): skipped in --quick.
    if with_compile:
        records += compile_times(build, 3)

    # ---- index, checks, floors ---------------------------------------------
    by = {}
    planner = {}  # group 8: our planner's path cost next to the recorded path's
    for r in records:
        if r["impl"] == "planner":
            planner[(r["case"], r["size"])] = r
            continue
        key = (r["case"], r["size"], r["variant"], r["threads"], r["impl"])
        # Several rounds of one cell (ROUND_GROUPS): keep the best.
        prev = by.get(key)
        if prev is None or (r.get("median_ns") or math.inf) < (prev.get("median_ns") or math.inf):
            by[key] = r
    for (c, s, v), (ac, as_, av) in PEER_ALIAS.items():
        for t in (1, 2):
            for impl in PEERS:
                if (ac, as_, av, t, impl) in by:
                    by[(c, s, v, t, impl)] = by[(ac, as_, av, t, impl)]
    mismatches = []
    for (c, s, v, t, impl), r in by.items():
        if impl == "tenferro" or impl in FLOOR_IMPLS or "check" not in r:
            continue
        mine = by.get((c, s, v, t, "tenferro"))
        if mine is None or "check" not in mine:
            continue
        a, b = mine["check"], r["check"]
        if len(a) != len(b) or not all(close(x, y) for x, y in zip(a, b)):
            msg = f"MISMATCH {c} {s} {v} {t}T: tenferro {a} vs {impl} {b}"
            mismatches.append((c, s, v, t, impl))
            log("!" * 78 + "\n!!! " + msg + "\n" + "!" * 78)

    def t_of(c, s, v, t, impl):
        r = by.get((c, s, v, t, impl))
        return r["median_ns"] if r and r.get("median_ns") else None

    # The machine's GEMM peak per thread count: the best f64 matmul rate any
    # side reached (flop per ns = GFLOP/s); floors are flops / peak.
    peak = {}
    for t in (1, 2):
        rates = [TWO_T_FLOPS[("matmul", n)] / t_of("matmul", n, "", t, i)
                 for n in ("256", "1024") for i in IMPLS if t_of("matmul", n, "", t, i)]
        if rates:
            peak[t] = max(rates)

    rows = []
    shown_cases = cases + ([COMPILE_CASE] if group_matches(COMPILE_CASE[4], only) else [])
    for c, s, v, t, group in shown_cases:
        times = {i: t_of(c, s, v, t, i) for i in IMPLS}
        peer_times = [times[p] for p in PEERS if times[p]]
        best_peer = min(peer_times) if peer_times else None
        ratio = best_peer / times["tenferro"] if best_peer and times["tenferro"] else None
        floor = None
        if (c, s) in TWO_T_FLOPS and t in peak:
            floor = TWO_T_FLOPS[(c, s)] / peak[t]
        elif (c, s) in COPY_FLOOR:
            floor = t_of("floor_copy", str(COPY_FLOOR[(c, s)]), "floor", t, FLOOR_COPY_IMPL.get(t))
        else:
            floor = next((t_of(c, s, v, t, f) for f in FLOOR_IMPLS if t_of(c, s, v, t, f)), None)
        bad = [i for (cc, ss, vv, tt, i) in mismatches if (cc, ss, vv, tt) == (c, s, v, t)]
        note = PENDING_OURS.get(c, "") if times["tenferro"] is None else ""
        if c == "compile_time_matmul" and args.quick:
            note = "skipped in --quick"
        rows.append({"group": group, "case": c, "size": s, "variant": v, "threads": t,
                     "times": times, "ratio": ratio, "floor": floor, "mismatch": bad,
                     "note": note})

    # ---- outputs -------------------------------------------------------------
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    json_recs = [{k: r[k] for k in ("case", "size", "impl", "variant", "threads", "median_ns",
                                    "iqr_ns", "round") if k in r}
                 for r in records if r["impl"] != "planner"]
    json_recs += [r for r in records if r["impl"] == "planner"]
    json_recs += ab_recs
    json_recs += fixed_point_recs
    json_recs += distributed_recs
    json_recs += dist_linalg_recs
    (out / f"{stem}.json").write_text(json.dumps(json_recs, indent=1) + "\n")

    cpu = "unknown CPU"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                   if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    title = f"# Benchmark results{' (--quick)' if args.quick else ''}"
    if only:
        shown_groups = ({c[4] for c in shown_cases}
                        | ({FIXED_POINT_GROUP} if with_fixed_point else set())
                        | ({DISTRIBUTED_GROUP} if with_distributed else set())
                        | ({DISTRIBUTED_LINALG_GROUP} if with_distributed_linalg else set()))
        title += f" (--only {','.join(only)}: {', '.join(sorted(shown_groups))})"
    round_groups = sorted({c[4].split(" ", 1)[0] for c in cases if c[4] in ROUND_GROUPS}, key=int)
    rounds_text = (f"; groups {', '.join(round_groups)}: the best of {rounds} interleaved rounds "
                   "per side" if round_groups else "")
    lines = [title, "",
             f"Run: {time.strftime('%Y-%m-%d %H:%M:%S')}, {cpu}, {os.cpu_count()} cores, "
             f"1-min load average {load_start:.2f} at the start and "
             f"{loadavg():.2f} at the end (other processes add noise); median of "
             f"{7 if args.quick else 11} timed samples per cell{rounds_text}. "
             "ratio = best peer time / tenferro time (> 1: tenferro faster).", ""]
    if peak:
        lines.append("Measured GEMM peak (best f64 matmul rate of any side): " +
                     ", ".join(f"{t}T {p:.1f} GFLOP/s" for t, p in sorted(peak.items())) + ".")
        lines.append("")
    if rows:  # (none in a run of group 19 alone)
        lines += ["| case | size | variant | T | tenferro | libtorch | torch | numpy | ratio "
                  "| floor | check |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tm = r["times"]
        check = "MISMATCH vs " + ",".join(r["mismatch"]) if r["mismatch"] else (
            "ok" if any("check" in by.get((r["case"], r["size"], r["variant"], r["threads"], p),
                                         {}) for p in PEERS) and tm["tenferro"] else "")
        ours_cell = fmt_time(tm["tenferro"]) if tm["tenferro"] else (
            f"n/a ({r['note']})" if r["note"] else "n/a")
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "n/a"
        alias = PEER_ALIAS.get((r["case"], r["size"], r["variant"]))
        if alias and check:
            check += f" (peers: the {alias[2] or alias[1]} row)"
        lines.append(f"| {r['case']} | {r['size']} | {r['variant']} | {r['threads']} | {ours_cell} "
                     f"| {fmt_time(tm['libtorch'])} | {fmt_time(tm['torch'])} "
                     f"| {fmt_time(tm['numpy'])} | {ratio} | "
                     f"{fmt_time(r['floor']) if r['floor'] else ''} | {check} |")
    if planner:
        lines += ["", "Group 8, our planner (EinsumStrategy::Auto) on the same networks, costs in "
                  "the instances' convention (docs/einsum.md); the rows above run the recorded "
                  "path:", "", "| instance | log10 flops ours | recorded | log2 size ours | "
                  "recorded | search |", "|---|---|---|---|---|---|"]
        for (c, _), r in sorted(planner.items()):
            lines.append(f"| {c} | {r['log10_flops']:.4f} | {r['recorded_log10_flops']:.4f} "
                         f"| {r['log2_size']:.2f} | {r['recorded_log2_size']:.2f} "
                         f"| {r['search_ms']:.1f} ms |")
    rate_rows = [r for r in rows if (r["case"], r["size"]) in ELEMENT_OPS]
    if rate_rows:
        lines += ["", "Group 18 as element operations per second (m n k / time: one add and one "
                  "max of max-plus, one multiply-add of the BLAS GEMM), in G/s; "
                  "tenferro / BLAS is the share of OpenBLAS's GEMM rate (aim: at least 0.5):",
                  "", "| case | size | dtype | T | tenferro | BLAS gemm | tenferro / BLAS "
                  "| torch | numpy |", "|---|---|---|---|---|---|---|---|---|"]
        for r in rate_rows:
            ops = ELEMENT_OPS[(r["case"], r["size"])]
            tm = r["times"]

            def rate(ns):
                return ops / ns if ns else None

            ours, blas = rate(tm["tenferro"]), rate(r["floor"])
            cells = [f"{x:.2f}" if x else "n/a"
                     for x in (ours, blas, ours / blas if ours and blas else None,
                               rate(tm["torch"]), rate(tm["numpy"]))]
            lines.append(f"| {r['case']} | {r['size']} | {r['variant']} | {r['threads']} | "
                         + " | ".join(cells) + " |")
    if ab_recs:
        rounds_ab = ab_recs[0]["rounds"]
        lines += ["", "Memory-bound rows again, both sides in one process (bench/peers/libtorch_ab."
                  f"cpp): {rounds_ab} rounds, each a block of calls of one side and then of the "
                  "other (alternating which goes first); times are the median over the rounds of "
                  "each block's median call; ratio = libtorch / tenferro; wins = rounds in which "
                  "tenferro's block was faster.", "",
                  "| case | size | variant | T | tenferro | libtorch | ratio | wins |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in ab_recs:
            lines.append(f"| {r['case']} | {r['size']} | {r['variant']} | {r['threads']} "
                         f"| {fmt_time(r['ours_ns'])} | {fmt_time(r['libtorch_ns'])} "
                         f"| {r['libtorch_ns'] / r['ours_ns']:.2f} "
                         f"| {r['ours_faster']}/{r['rounds']} |")
    if fixed_point_recs:
        fp = {(r["size"], r["variant"]): r for r in fixed_point_recs}
        lines += ["", f"Group 19, the CTMRG gradient d(ln Z/N)/d beta of the 2D Ising model at "
                  f"T = {FIXED_POINT_TEMPERATURE} (bench/cases/ctmrg_bench.cpp; eager, 1 thread, "
                  "one process per cell): through fixed_point (the plain loop to convergence, "
                  "then the implicit adjoint solve) against backpropagation through the same "
                  "iterations unrolled from the initial environment; value = the plain loop and "
                  "ln Z alone. Peak RSS by getrusage (the process's baseline included: see "
                  "value). Ratios: unrolled / fixed_point; memory above value: the same ratio "
                  "after subtracting the value cell's RSS.", "",
                  "| chi | iterations | value | fixed_point | unrolled | time ratio | RSS value "
                  "| RSS fixed_point | RSS unrolled | memory ratio | above value | gradients |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for chi in FIXED_POINT_CHI[args.quick]:
            size = f"chi{chi}"
            val, imp, unr = (fp.get((size, v)) for v in FIXED_POINT_VARIANTS)
            if not imp or not unr:
                lines.append(f"| {chi} | n/a | | | | | | | | | | n/a |")
                continue
            agree = abs(imp["result"] - unr["result"]) <= 1e-8 * max(1.0, abs(unr["result"]))
            if not agree:
                errors.append(f"group 19 chi {chi}: fixed_point gradient {imp['result']} vs "
                              f"unrolled {unr['result']}")
            base = val["peak_rss_mb"] if val else 0.0
            above = ((unr["peak_rss_mb"] - base) / (imp["peak_rss_mb"] - base)
                     if val and imp["peak_rss_mb"] > base else None)
            lines.append(
                f"| {chi} | {imp['iterations']} | {fmt_time(val['median_ns']) if val else 'n/a'} "
                f"| {fmt_time(imp['median_ns'])} | {fmt_time(unr['median_ns'])} "
                f"| {unr['median_ns'] / imp['median_ns']:.2f} "
                f"| {val['peak_rss_mb'] if val else 'n/a'} MB | {imp['peak_rss_mb']} MB "
                f"| {unr['peak_rss_mb']} MB | {unr['peak_rss_mb'] / imp['peak_rss_mb']:.1f} "
                f"| {f'{above:.0f}' if above else 'n/a'} "
                f"| {'agree' if agree else 'MISMATCH'} ({abs(imp['result'] - unr['result']):.0e}) |")
    if distributed_recs:
        dr = {(r["case"], r["variant"], r["threads"]): r for r in distributed_recs}
        ranks = f"{DISTRIBUTED_RANKS} ranks"
        reps = max(r.get("reps", 0) for r in distributed_recs)
        lines += ["", f"Group 20, sharded tensors on MPI (bench/cases/distributed_bench.cpp; "
                  f"f64 on {DISTRIBUTED_RANKS} ranks of one thread each, mpirun on this machine, "
                  f"against one process; median of {reps} calls): matmul and its gradient n x n "
                  "row-sharded; chain = ij,jk,kl,lm->im of n x n row-sharded matrices; mps / mera "
                  "= the instances str_mps_varying_inner_product_200 and str_nw_mera_closed_120 "
                  "(size = tensors), every operand sharded along its largest axis, along our "
                  "planner's path (one dist::einsum per pairwise step) against tenferro::einsum "
                  "on the same path. Each time is the slowest rank's; sent = bytes one rank sent "
                  "in one call; model = the planner's bandwidth-optimal volume per rank of the "
                  "collectives of the strategies it chose (the lower bound of the algorithm "
                  "used; the gradient: twice the forward's, each collective's transpose moving "
                  "what it moved); efficiency = (1 process, 1 thread) / (ranks x time on ranks); "
                  "ratio = (1 process, 2 threads) / (ranks); check = ranks against one process, "
                  f"relative {DISTRIBUTED_TOLERANCE:g}.", "",
                  f"| case | size | 1 process 1T | 1 process 2T | {ranks} | sent per rank "
                  "| model | sent / model | efficiency | ratio | check |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for case in DISTRIBUTED_CASES:
            one, two = dr.get((case, "1 process", 1)), dr.get((case, "1 process", 2))
            par = dr.get((case, ranks, DISTRIBUTED_RANKS))
            if not (one and two and par):
                lines.append(f"| {case} | | n/a | | | | | | | | |")
                continue
            eff = one["median_ns"] / (DISTRIBUTED_RANKS * par["median_ns"])
            model = par.get("model_bytes", 0.0)
            diff = par.get("rel_diff")
            if diff is None:
                check = "n/a"
            elif diff <= DISTRIBUTED_TOLERANCE:
                check = f"ok ({diff:.0e})"
            else:
                check = f"MISMATCH ({diff:.1e})"
                errors.append(f"group 20 {case} {par['size']}: {ranks} differ from one process "
                              f"by {diff:.2e} (relative)")
            sent = par["bytes_sent"]
            over = f"{sent / model:.2f}" if model > 0 else ("-" if sent == 0 else "n/a")
            lines.append(f"| {case} | {par['size']} | {fmt_time(one['median_ns'])} "
                         f"| {fmt_time(two['median_ns'])} | {fmt_time(par['median_ns'])} "
                         f"| {sent / 2**20:.2f} MiB | {model / 2**20:.2f} MiB | {over} "
                         f"| {eff:.2f} | {two['median_ns'] / par['median_ns']:.2f} | {check} |")
    if dist_linalg_recs:
        lines += distributed_linalg_table(dist_linalg_recs, errors)
    if pending_all:
        lines += ["", "Not measured yet (no tenferro side; peers skipped):", ""]
    for group, what, why in pending_all:
        lines.append(f"- {group}: {what} — n/a ({why})")
    if errors or mismatches:
        lines += ["", "Problems in this run:", ""]
        lines += [f"- {e}" for e in errors]
        lines += [f"- MISMATCH {c} {s} {v} {t}T vs {i}" for c, s, v, t, i in mismatches]
    lines.append("")
    (out / f"{stem}.md").write_text("\n".join(lines))
    if args.update_docs:
        doc = ROOT / "docs/performance.md"
        text = doc.read_text()
        begin, end = "<!-- results:begin -->", "<!-- results:end -->"
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            body = "\n".join(lines[2:])  # without the title
            doc.write_text(head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1])

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        shown = [r for r in rows if r["ratio"]]
        labels = [f"{r['case']} {r['size']} {r['variant']} {r['threads']}T".replace("  ", " ")
                  for r in shown]
        vals = [r["ratio"] for r in shown]
        fig, ax = plt.subplots(figsize=(9, 0.32 * len(shown) + 1.5))
        # bars grow from 1 (parity) towards the ratio, right = we are faster
        ax.barh(range(len(shown)), [v - 1.0 for v in vals], left=1.0,
                color=["tab:green" if v >= 1 else "tab:red" for v in vals])
        for y, v in enumerate(vals):
            ax.text(v, y, f" {v:.2f} ", va="center", ha="left" if v >= 1 else "right",
                    fontsize=7)
        ax.set_yticks(range(len(shown)), labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        lo, hi = min(vals + [1.0]) / 1.6, max(vals + [1.0]) * 1.6
        ax.set_xlim(lo, hi)
        ticks = [t for t in (0.03, 0.1, 0.25, 0.5, 1, 2, 4, 10, 30) if lo <= t <= hi]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel("best peer time / tenferro time (log; > 1 means tenferro is faster)")
        ax.set_title("tenferro vs best of libtorch, PyTorch, NumPy (f64)")
        fig.tight_layout()
        fig.savefig(out / f"{stem}.png", dpi=110)
    except Exception as e:  # the table and JSON are still written
        errors.append(f"chart not written: {e}")
        log(f"!!! chart not written: {e}")

    log("")
    log("\n".join(lines))
    log(f"wrote {out}/{stem}.md, {stem}.json, {stem}.png in {time.time() - t_start:.0f}s")
    return 1 if mismatches or errors else 0


if __name__ == "__main__":
    sys.exit(main())
