#!/usr/bin/python3
"""Differentiable tensor renormalisation of the 2D Ising model, in Python.

The Python twin of the C++ demo (examples/ising_trg, docs/demo.md): the
partition function of the Ising model on a periodic square lattice of
2^steps sites is a tensor network; TRG (Levin and Nave) coarse-grains it with
truncated SVDs and einsum, and tenferro's AD differentiates ln Z / N with
respect to beta through all of it: the first derivative gives the energy, the
second the specific heat (Liao, Liu, Wang and Xiang, "Differentiable
Programming Tensor Networks", Phys. Rev. X 9, 031041, 2019). The results are
compared with Onsager's exact solution; a table goes to stdout, a CSV and a
PNG plot (matplotlib) to --out.

Usage (PYTHONPATH=build/python, or after ./run python-install):

    /usr/bin/python3 examples/python/ising_trg.py [--chi N] [--paper] [--steps N]
        [--t-min T --t-max T --temps N | --temperatures a,b,...]
        [--mode traced|eager] [--checkpoint [K]] [--threads N] [--out DIR] [--no-plot]

The options, the defaults (chi = 16, 20 steps, 17 temperatures from 1.6 to
3.2, traced mode), the table and the CSV files are the C++ demo's
(`./build/examples/ising_trg --help`), and so are the numbers: every mode
gives the C++ demo's numbers for the same options
(tests/python/test_example_ising_trg.py checks them to 1e-10; measured:
the CSV files are identical, 12 digits, at the defaults, eager and traced).
The traced mode needs a package with the traced tier (tenferro.trace);
without it the default is eager.

The algorithm uses only tenferro. NumPy appears only in the exact reference
(Onsager) and in printing.

Axis order. Every tensor here lists its axes in the C++ demo's order
reversed: the C++ site tensor T(l, u, r, d) is t[d, r, u, l] here. A Python
shape is the C++ shape reversed on the same memory (docs/python.md), so each
tensor has the C++ demo's memory layout, and every SVD, contraction and
reduction gets the same numbers in the same order as in the C++ demo. That
matters for the specific heat: the regularised SVD derivative of degenerate
singular values cancels in exact arithmetic but leaves rounding noise. The
same TRG written in NumPy's natural order (t[l, u, r, d], whose SVDs factor
the same matrices with rows and columns permuted) gave c up to 3e-10
(relative) away from the C++ demo's at the defaults (T = 2.4 to 2.8), and
the other columns to 1e-15.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import tenferro as tf

# The AD policy of the SVDs: 'regularised' broadens every 1/(s_i^2 - s_j^2) to
# d / (d^2 + eta^2), so the degenerate and zero singular values of the network
# (exact at the first step, common at low temperature) give finite derivatives.
SVD_GAUGE = "regularised"
SVD_ETA = 1e-8  # the C++ linalg::SpectralOptions default


def has_traced_tier() -> bool:
    """Whether this tenferro package binds the traced tier (tenferro.trace)."""
    return all(hasattr(tf, name) for name in ("jit", "Spec", "checkpoint", "TracedTensor"))


@dataclass
class Config:
    chi: int = 16
    steps: int = 20
    temperatures: list = field(default_factory=list)
    mode: str = field(default_factory=lambda: "traced" if has_traced_tier() else "eager")
    checkpoint_steps: int = 0
    threads: int = 0
    out: str = "ising_trg_output"
    plot: bool = True
    plot_script: str = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "ising_trg", "plot.py")


@dataclass
class Thermodynamics:
    beta: float
    log_z: float          # ln Z / N
    free_energy: float    # f = -(ln Z / N) / beta
    energy: float         # u = -d(ln Z/N)/d beta
    specific_heat: float  # c = beta^2 d^2(ln Z/N)/d beta^2


def bond_dimensions(chi: int, steps: int) -> list:
    """The bond dimension before each step and after the last: 2, then
    min(chi, d^2) of the previous d (the rank the truncated SVDs keep)."""
    if chi < 2:
        raise ValueError(f"ising TRG: chi must be at least 2 (got {chi})")
    if not 1 <= steps <= 60:
        raise ValueError(f"ising TRG: steps must be in [1, 60] (got {steps}); "
                         "2^steps is the number of sites")
    dims = [2]
    for _ in range(steps):
        dims.append(min(chi, dims[-1] * dims[-1]))
    return dims


# ---- TRG ---------------------------------------------------------------------------------


def root_of_kept(s):
    """sqrt(s) for the singular values above 1e-12 of the largest, 0 for the
    rest. The network has exact zero singular values (the first tensor's
    splits have rank 2 of 4, and every rank below chi leaves some): their
    singular vectors are arbitrary and would leak noise into the next
    truncation, so they stay exact zeros; the inner where() keeps sqrt's
    derivative away from s = 0 (the masked branch sees sqrt(1))."""
    largest = s[0:1]
    kept = s > largest * 1e-12
    return tf.where(kept, tf.sqrt(tf.where(kept, s, tf.ones_like(s))), tf.zeros_like(s))


def svd_split(m, chi: int):
    """The truncated SVD of the C++ demo's matrix M, given as its view here,
    m = M^T (axes reversed): returns U^T, S, Vh^T and the rank, each U^T and
    Vh^T the C++ factor in this file's (reversed) axis order."""
    u, s, vh, rank, _ = tf.linalg.svd_truncated(m.T, max_rank=chi, gauge=SVD_GAUGE, eta=SVD_ETA)
    return u.T, s, vh.T, rank


def rg_step(t, log_z, step: int, d: int, chi: int):
    """One coarse-graining step of the network tensor t[d, r, u, l], the C++
    demo's T(l, u, r, d) (bond dimension d, site weight 1/2^step): ln Z / N
    gains ln(norm t) / 2^step, and t becomes the tensor of the lattice with
    half as many sites."""
    # Normalise: T = norm * That, so ln Z gains ln(norm) per tensor.
    norm = tf.sqrt(tf.sum(t * t))
    t = t / norm
    log_z = log_z + tf.log(norm) * math.ldexp(1.0, -step)

    # Sublattice A splits T(l,u,r,d) between (l,u) and (r,d); sublattice B
    # between (u,r) and (d,l): M_A[(l,u), (r,d)] and M_B[(u,r), (d,l)].
    ut_a, s_a, vht_a, r = svd_split(t.reshape(d * d, d * d), chi)
    ut_b, s_b, vht_b, _ = svd_split(t.transpose(3, 0, 1, 2).reshape(d * d, d * d), chi)
    f1 = (ut_a * root_of_kept(s_a)[:, None]).reshape(r, d, d)   # F1(l, u, k) as [k, u, l]
    f3 = (root_of_kept(s_a)[None, :] * vht_a).reshape(d, d, r)  # F3(k, r, d) as [d, r, k]
    f2 = (ut_b * root_of_kept(s_b)[:, None]).reshape(r, d, d)   # F2(u, r, k) as [k, r, u]
    f4 = (root_of_kept(s_b)[None, :] * vht_b).reshape(d, d, r)  # F4(k, d, l) as [l, d, k]
    # The four triangles around a plaquette (F3 of its top-left site, F4 of the
    # top-right, F1 of the bottom-right, F2 of the bottom-left) form the tensor
    # of the next, 45-degree rotated lattice with half as many sites: the C++
    # demo's "atl,brt,mrc,lmd->abcd" with every term reversed.
    t = tf.einsum("lta,trb,crm,dml->dcba", f3, f4, f1, f2)
    return t, log_z


def log_z_per_site(beta, chi: int, steps: int, on_step=None, checkpoint_steps: int = 0):
    """ln Z / N at inverse temperature beta (a scalar float64 tensor: eager,
    tracked or not, or traced inside tenferro.trace) on a periodic lattice of
    2^steps sites, by TRG at bond dimension chi; differentiable in beta to any
    order. checkpoint_steps = k > 0 (traced only) runs every k consecutive RG
    steps as one checkpoint region, whose intermediates the derivative passes
    recompute instead of storing."""
    dims = bond_dimensions(chi, steps)
    traced = isinstance(beta, getattr(tf, "TracedTensor", ()))
    if checkpoint_steps < 0 or (not traced and checkpoint_steps > 0):
        raise ValueError("ising TRG: checkpoint_steps must be >= 0, and 0 in the eager tier "
                         f"(got {checkpoint_steps})")
    # exp(beta s s') = sum_k W(s, k) W(s', k) with W = [[c, s], [c, -s]],
    # c = sqrt(cosh beta), s = sqrt(sinh beta): each bond is split between its
    # two sites, and the site tensor T(l, u, r, d) = sum_s W(s,l) W(s,u)
    # W(s,r) W(s,d) carries the four half-bonds of one spin.
    c = tf.sqrt(tf.cosh(beta))
    s = tf.sqrt(tf.sinh(beta))
    w = tf.stack([tf.stack([c, c]), tf.stack([s, -s])])  # W(spin, k) as w[k, spin]
    t = tf.einsum("ia,ja,ka,la->lkji", w, w, w, w)  # T(l, u, r, d) as t[d, r, u, l]
    log_z = tf.zeros_like(beta)

    group = checkpoint_steps if checkpoint_steps > 0 else steps
    for first in range(0, steps, group):
        last = min(steps, first + group)

        def run_steps(t, log_z, first=first, last=last):
            for step in range(first, last):
                t, log_z = rg_step(t, log_z, step, dims[step], chi)
                if on_step:
                    on_step(step + 1, steps)
            return t, log_z

        if checkpoint_steps > 0:
            # The region keeps only (t, log_z) at its ends; the derivative
            # passes recompute its SVDs and contractions from them.
            t, log_z = tf.checkpoint(run_steps, t, log_z)
        else:
            t, log_z = run_steps(t, log_z)
    # Close the last tensor on itself (periodic boundaries).
    return log_z + tf.log(tf.einsum("baba->", t)) * math.ldexp(1.0, -steps)


def thermodynamics(beta: float, log_z: float, dlog_z: float, d2log_z: float) -> Thermodynamics:
    return Thermodynamics(beta=beta, log_z=log_z, free_energy=-log_z / beta, energy=-dlog_z,
                          specific_heat=beta * beta * d2log_z)


class EagerTrg:
    """Eager tier: each call runs TRG on beta and takes jvp of grad (forward
    over reverse), which gives the first and second derivative in one pass."""

    def __init__(self, chi: int, steps: int):
        bond_dimensions(chi, steps)  # validates chi and steps
        self.chi, self.steps = chi, steps

    def __call__(self, beta: float, on_step=None) -> Thermodynamics:
        value = {}

        def log_z(b):
            y = log_z_per_site(b, self.chi, self.steps, on_step)
            value["log_z"] = y.detach()  # the value of the innermost evaluation
            return y

        d1, d2 = tf.autograd.jvp(lambda b: tf.autograd.grad(log_z, b),
                                 tf.tensor(beta, dtype=tf.float64), tf.tensor(1.0))
        return thermodynamics(beta, value["log_z"].item(), d1.item(), d2.item())


class TracedTrg:
    """Traced tier: the coarse-graining is traced once with beta as its input
    into a program, transformed, and prepared once; each call only runs it.

    The C++ demo builds one program with three outputs from tf::grad and
    tf::hvp of traced tensors inside the graph. The Python package transforms
    whole programs (Program.grad/vjp/jvp/hvp), so the same three numbers come
    from one program here too: the jvp of the vjp of ln Z, run with cotangent
    1 and tangents (1, 0), returns (ln Z, d ln Z, d ln Z, d2 ln Z)."""

    def __init__(self, chi: int, steps: int, checkpoint_steps: int = 0, on_step=None):
        program = tf.jit(lambda b: log_z_per_site(b, chi, steps, on_step, checkpoint_steps),
                           tf.Spec((), tf.float64, "beta"))
        # inputs (beta, cotangent, beta's tangent, cotangent's tangent)
        self.program = program.vjp().jvp()
        self.node_count = self.program.node_count
        self.prepared = self.program.prepare(0.5, 1.0, 1.0, 0.0)

    def __call__(self, beta: float) -> Thermodynamics:
        log_z, dlog_z, _, d2log_z = self.prepared(beta, 1.0, 1.0, 0.0)
        return thermodynamics(beta, log_z.item(), dlog_z.item(), d2log_z.item())


def run(config: Config, on_step=None) -> list:
    """Thermodynamics at each of config.temperatures. on_step(i, step, steps)
    reports the RG steps (i = -1: building the traced program)."""
    bond_dimensions(config.chi, config.steps)
    if config.mode == "traced":
        trg = TracedTrg(config.chi, config.steps, config.checkpoint_steps,
                        (lambda step, steps: on_step(-1, step, steps)) if on_step else None)
        return [trg(1.0 / temp) for temp in config.temperatures]
    trg = EagerTrg(config.chi, config.steps)
    return [trg(1.0 / temp, (lambda step, steps, i=i: on_step(i, step, steps)) if on_step else None)
            for i, temp in enumerate(config.temperatures)]


# ---- Onsager's exact solution (the reference; NumPy) ----------------------------------------


def critical_temperature() -> float:
    return 2.0 / math.log(1.0 + math.sqrt(2.0))


def _modulus(beta: float) -> float:
    ch = math.cosh(2 * beta)
    return min(1.0, 2 * math.sinh(2 * beta) / (ch * ch))


def _elliptic_k_e(k: float):
    """Complete elliptic integrals K(k), E(k) by the arithmetic-geometric mean."""
    a, b, c2, power, total = 1.0, math.sqrt(1.0 - k * k), k * k, 0.5, 0.0
    total += power * c2
    for _ in range(64):
        c = (a - b) / 2
        a, b = (a + b) / 2, math.sqrt(a * b)
        power *= 2
        total += power * c * c
        if abs(c) < 1e-17 * a:
            break
    kk = math.pi / (2 * a)
    return kk, kk * (1 - total)


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(40)


def exact_log_z(beta: float) -> float:
    """ln Z / N = ln(2 cosh 2b) + (1/pi) int_0^{pi/2} ln((1 + sqrt(1 - k^2 sin^2 t)) / 2) dt
    (composite Gauss-Legendre over 32 panels)."""
    k = _modulus(beta)
    edges = np.linspace(0.0, math.pi / 2, 33)
    mid, half = (edges[1:] + edges[:-1]) / 2, (edges[1:] - edges[:-1]) / 2
    t = (mid[:, None] + half[:, None] * _NODES[None, :]).ravel()
    st = np.sin(t)
    f = np.log((1.0 + np.sqrt(np.maximum(0.0, 1.0 - k * k * st * st))) / 2.0)
    integral = float(np.sum(f.reshape(32, -1) * _WEIGHTS[None, :] * half[:, None]))
    return math.log(2.0 * math.cosh(2 * beta)) + integral / math.pi


def exact_energy(beta: float) -> float:
    """u = -coth(2b) (1 + (2/pi)(2 tanh^2(2b) - 1) K(k))."""
    k = _modulus(beta)
    t = math.tanh(2 * beta)
    q = 2 * t * t - 1
    kk = _elliptic_k_e(k)[0] if k < 1.0 else 0.0
    return -(1.0 / t) * (1.0 + (2.0 / math.pi) * q * kk)


def exact_specific_heat(beta: float) -> float:
    """c = -beta^2 du/d beta, from the energy's closed form (dK/dk = E/(k(1-k^2)) - K/k)."""
    k = _modulus(beta)
    if k >= 1.0:
        return math.inf
    t = math.tanh(2 * beta)
    sech = 1.0 / math.cosh(2 * beta)
    sh = math.sinh(2 * beta)
    q = 2 * t * t - 1
    kk, ee = _elliptic_k_e(k)
    dk_dmodulus = ee / (k * (1 - k * k)) - kk / k
    dq = 8 * t * sech * sech
    dmodulus = -4 * sech * q
    du = 2 / (sh * sh) * (1 + (2 / math.pi) * q * kk) - (1 / t) * (2 / math.pi) * (
        dq * kk + q * dk_dmodulus * dmodulus)
    return -beta * beta * du


# ---- command line, table, CSV, plot -----------------------------------------------------------


def parse(argv) -> Config:
    p = argparse.ArgumentParser(
        prog="ising_trg.py",
        description="Differentiable TRG for the 2D Ising model (the Python twin of "
                    "examples/ising_trg).")
    p.add_argument("--chi", type=int, default=16,
                   help="bond dimension of the truncated SVDs (default 16; the paper: 30)")
    p.add_argument("--paper", action="store_true", help="the paper's setting: --chi 30")
    p.add_argument("--steps", type=int, default=20,
                   help="coarse-graining steps, 2^N sites (default 20)")
    p.add_argument("--t-min", type=float, default=1.6)
    p.add_argument("--t-max", type=float, default=3.2)
    p.add_argument("--temps", type=int, default=17,
                   help="N temperatures evenly from T-min to T-max (default 1.6, 3.2, 17)")
    p.add_argument("--temperatures", type=str, default=None,
                   help="explicit temperatures a,b,... instead")
    p.add_argument("--mode", choices=("traced", "eager"), default=Config().mode,
                   help="traced: one program (ln Z and its first two derivatives) built and "
                        "prepared once, run per temperature (the default where the package "
                        "has the traced tier); eager: recomputed per temperature")
    p.add_argument("--checkpoint", nargs="?", const=1, type=int, default=None, metavar="K",
                   help="traced mode: run every K RG steps (default K = 1) as one checkpoint "
                        "region, so the derivatives recompute each region's intermediates "
                        "instead of keeping every step's (same results)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (default: all cores)")
    p.add_argument("--out", default="ising_trg_output",
                   help="where ising_trg.csv, ising_trg_exact.csv and ising_trg.png go")
    p.add_argument("--no-plot", action="store_true", help="skip the matplotlib plot")
    p.add_argument("--plot-script", default=Config.plot_script)
    a = p.parse_args(argv)
    if a.mode == "traced" and not has_traced_tier():
        p.error("--mode traced needs the traced tier (tenferro.trace, Spec, checkpoint), which "
                "this tenferro package does not have; use --mode eager")
    if a.checkpoint is not None and a.checkpoint < 1:
        p.error("--checkpoint K needs K >= 1 steps per region")
    if a.checkpoint and a.mode != "traced":
        p.error("--checkpoint needs --mode traced")
    chi = 30 if a.paper else a.chi
    if chi < 2:
        p.error("--chi must be at least 2")
    if not 1 <= a.steps <= 60:
        p.error("--steps must be in [1, 60]")
    if a.threads < 0:
        p.error("--threads must be >= 0 (0: all cores)")
    if a.temperatures:
        temps = [float(x) for x in a.temperatures.split(",") if x]
    else:
        if a.temps < 1:
            p.error("--temps must be at least 1")
        if not (a.t_min > 0 and a.t_max >= a.t_min):
            p.error("need 0 < --t-min <= --t-max")
        temps = [a.t_min + (0.0 if a.temps == 1 else i / (a.temps - 1)) * (a.t_max - a.t_min)
                 for i in range(a.temps)]
    if any(not t > 0 for t in temps):
        p.error("temperatures must be positive")
    return Config(chi=chi, steps=a.steps, temperatures=temps, mode=a.mode,
                  checkpoint_steps=a.checkpoint or 0, threads=a.threads, out=a.out,
                  plot=not a.no_plot, plot_script=a.plot_script)


def relative_error(got: float, exact: float) -> str:
    if not math.isfinite(exact):
        return "      n/a"
    return f"{abs(got - exact) / abs(exact):9.1e}"


def write_csv(config: Config, results: list) -> None:
    os.makedirs(config.out, exist_ok=True)
    with open(os.path.join(config.out, "ising_trg.csv"), "w") as f:
        f.write("T,beta,f_trg,f_exact,u_trg,u_exact,c_trg,c_exact\n")
        for r in results:
            f.write(",".join(f"{v:.12g}" for v in (
                1.0 / r.beta, r.beta, r.free_energy, -exact_log_z(r.beta) / r.beta, r.energy,
                exact_energy(r.beta), r.specific_heat, exact_specific_heat(r.beta))) + "\n")
    temps = config.temperatures
    lo, hi = min(temps[0], temps[-1]) * 0.9, max(temps[0], temps[-1]) * 1.05
    with open(os.path.join(config.out, "ising_trg_exact.csv"), "w") as f:
        f.write("T,u_exact,c_exact\n")
        for k in range(601):
            t = lo + (hi - lo) * k / 600.0
            if abs(t - critical_temperature()) < 1e-9:
                continue
            f.write(f"{t:.12g},{exact_energy(1 / t):.12g},{exact_specific_heat(1 / t):.12g}\n")


def main(argv=None) -> int:
    config = parse(sys.argv[1:] if argv is None else argv)
    if config.threads:
        tf.set_num_threads(config.threads)
    temps = config.temperatures
    print("Differentiable TRG for the 2D Ising model (J = 1, no field)\n"
          f"  bond dimension chi = {config.chi}, {config.steps} RG steps (2^{config.steps} sites, "
          f"periodic), {len(temps)} temperatures, {config.mode} mode, "
          + (f"checkpoint regions of {config.checkpoint_steps} step(s), "
             if config.checkpoint_steps else "")
          + f"{tf.get_num_threads()} threads\n"
          "  energy u = -d(ln Z/N)/d beta and specific heat c = beta^2 d^2(ln Z/N)/d beta^2\n"
          "  by AD through every einsum and truncated SVD (no finite differences);\n"
          "  SVD derivatives use GaugePolicy::Regularised (1/(s_i^2 - s_j^2) broadened by\n"
          f"  eta = {SVD_ETA:g} times |s^2|), so the degenerate and zero singular values of the\n"
          "  network (exact at the first step, common at low temperature) give finite "
          "derivatives.\n"
          "  Exact values: Onsager (ln Z by Gauss-Legendre quadrature, u and c from elliptic "
          "integrals).\n"
          f"  Critical temperature Tc = {critical_temperature():.6g}\n", flush=True)

    tty = sys.stderr.isatty()
    start = time.perf_counter()

    def progress(i, step, steps):
        if tty:
            filled = 24 * max(i, 0) // len(temps)
            what = (f"building the graph: RG step {step}/{steps}" if i < 0 else
                    f"temperature {i + 1}/{len(temps)}  RG step {step}/{steps} "
                    f"(T = {temps[i]:.4g}, then the derivatives)")
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (24 - filled)}] {what}  "
                             f"{time.perf_counter() - start:.1f} s")
            sys.stderr.flush()

    results = run(config, progress)
    seconds = time.perf_counter() - start
    if tty:
        sys.stderr.write("\n")

    print("     T     f (TRG)    f (exact)  rel.err    u (AD)    u (exact)  rel.err    c (AD)    "
          "c (exact)  rel.err")
    for r in results:
        t = 1.0 / r.beta
        f_exact = -exact_log_z(r.beta) / r.beta
        u_exact = exact_energy(r.beta)
        c_exact = exact_specific_heat(r.beta)
        near = "  (near Tc)" if abs(t - critical_temperature()) < 0.05 else ""
        print(f"{t:7.4f}{r.free_energy:12.6f}{f_exact:12.6f}"
              f"{relative_error(r.free_energy, f_exact)}"
              f"{r.energy:11.6f}{u_exact:11.6f}{relative_error(r.energy, u_exact)}"
              f"{r.specific_heat:11.6f}{c_exact:11.6f}{relative_error(r.specific_heat, c_exact)}"
              f"{near}")
    print(f"\n{len(temps)} temperatures in {seconds:.1f} s")

    write_csv(config, results)
    csv_path = os.path.join(config.out, "ising_trg.csv")
    print(f"wrote {csv_path} and {os.path.join(config.out, 'ising_trg_exact.csv')}")
    if config.plot:
        png = os.path.join(config.out, "ising_trg.png")
        ok = subprocess.run(["/usr/bin/python3", config.plot_script, config.out, str(config.chi),
                             png]).returncode == 0
        print(f"wrote {png}" if ok else
              "plot skipped: it needs /usr/bin/python3 with matplotlib (Debian: apt-get install "
              "python3-matplotlib); the CSV files have the numbers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
