"""examples/python/ising_trg.py, the Python twin of the C++ Ising TRG demo:
its numbers against the C++ demo's (build/examples/ising_trg) for the same
options to 1e-10 (relative) in each mode the package binds (eager; traced,
with and without checkpoint regions), against an independent NumPy TRG
written here (ln Z; energy and specific heat by finite differences), and
against Onsager. A small network (chi = 8, 2^10 sites) keeps it to a few
seconds."""

import csv
import importlib.util
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tenferro as tf

ROOT = pathlib.Path(os.environ.get("TENFERRO_SOURCE_DIR",
                                   pathlib.Path(__file__).resolve().parents[2]))
CHI, STEPS, TEMPERATURES = 8, 10, [1.8, 2.3, 3.0]  # ordered, near Tc, disordered


def _load_example():
    spec = importlib.util.spec_from_file_location("ising_trg_example",
                                                  ROOT / "examples" / "python" / "ising_trg.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ex = _load_example()


def _cpp_demo():
    """build/examples/ising_trg under TENFERRO_BUILD_DIR, the build tree of
    the package under test, or the source tree's build/; None if not built."""
    candidates = []
    if os.environ.get("TENFERRO_BUILD_DIR"):
        candidates.append(pathlib.Path(os.environ["TENFERRO_BUILD_DIR"]))
    candidates.append(pathlib.Path(tf.__file__).resolve().parents[2])  # <build>/python/tenferro
    candidates.append(ROOT / "build")
    for build in candidates:
        exe = build / "examples" / "ising_trg"
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
    return None


# (mode, checkpoint steps): the C++ demo's tiers, as far as the package binds them.
RUNS = [("eager", 0)] + ([("traced", 0), ("traced", 3)] if ex.has_traced_tier() else [])


def _run(mode, checkpoint_steps):
    return ex.run(ex.Config(chi=CHI, steps=STEPS, temperatures=TEMPERATURES, mode=mode,
                            checkpoint_steps=checkpoint_steps))


@pytest.fixture(scope="module")
def results():
    """The eager tier's numbers (what the independent checks use)."""
    return _run("eager", 0)


def _read_csv(path):
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _rel(got, want):
    return abs(got - want) / abs(want)


@pytest.mark.parametrize("mode,checkpoint_steps", RUNS,
                         ids=[f"{m}-checkpoint{k}" if k else m for m, k in RUNS])
def test_same_numbers_as_the_cpp_demo(tmp_path, mode, checkpoint_steps):
    exe = _cpp_demo()
    if exe is None:
        pytest.skip("build/examples/ising_trg is not built (set TENFERRO_BUILD_DIR); "
                    "test_against_an_independent_numpy_trg still checks the numbers")
    results = _run(mode, checkpoint_steps)
    out = tmp_path / "out"
    subprocess.run([str(exe), "--chi", str(CHI), "--steps", str(STEPS), "--temperatures",
                    ",".join(str(t) for t in TEMPERATURES), "--mode", mode, "--no-plot",
                    "--threads", str(tf.get_num_threads()), "--out", str(out)]
                   + (["--checkpoint", str(checkpoint_steps)] if checkpoint_steps else []),
                   check=True, capture_output=True, timeout=120)
    rows = _read_csv(out / "ising_trg.csv")
    assert len(rows) == len(results)
    for r, row in zip(results, rows):
        # The CSV has 12 significant digits: 5e-12 relative rounding at most.
        assert _rel(r.beta, row["beta"]) < 1e-10
        assert _rel(r.free_energy, row["f_trg"]) < 1e-10, row["T"]
        assert _rel(r.energy, row["u_trg"]) < 1e-10, row["T"]
        assert _rel(r.specific_heat, row["c_trg"]) < 1e-10, row["T"]
        # The example's Onsager reference against the C++ demo's (Boost).
        assert _rel(-ex.exact_log_z(r.beta) / r.beta, row["f_exact"]) < 1e-10
        assert _rel(ex.exact_energy(r.beta), row["u_exact"]) < 1e-10
        assert _rel(ex.exact_specific_heat(r.beta), row["c_exact"]) < 1e-10


# ---- an independent reference: TRG in NumPy, derivatives by finite differences ---------------


def numpy_log_z(beta, chi, steps):
    """ln Z / N by Levin-Nave TRG in NumPy (no AD): the same network and
    truncation as the example, written from the physics."""
    c, s = math.sqrt(math.cosh(beta)), math.sqrt(math.sinh(beta))
    w = np.array([[c, s], [c, -s]])  # exp(beta s s') = sum_k w[s, k] w[s', k]
    t = np.einsum("ai,aj,ak,al->ijkl", w, w, w, w)  # t[l, u, r, d]
    log_z, d = 0.0, 2
    for step in range(steps):
        norm = np.linalg.norm(t)
        t = t / norm
        log_z += math.log(norm) / 2.0**step

        def split(m):
            u, sv, vh = np.linalg.svd(m)
            r = min(chi, len(sv))
            root = np.where(sv[:r] > sv[0] * 1e-12, np.sqrt(sv[:r]), 0.0)
            return u[:, :r] * root, root[:, None] * vh[:r], r

        left_a, right_a, r = split(t.reshape(d * d, d * d))                  # (l,u) | (r,d)
        left_b, right_b, _ = split(t.transpose(1, 2, 3, 0).reshape(d * d, d * d))  # (u,r) | (d,l)
        f1, f3 = left_a.reshape(d, d, r), right_a.reshape(r, d, d)
        f2, f4 = left_b.reshape(d, d, r), right_b.reshape(r, d, d)
        t = np.einsum("atl,brt,mrc,lmd->abcd", f3, f4, f1, f2, optimize=True)
        d = r
    return log_z + math.log(np.einsum("abab->", t)) / 2.0**steps


def test_against_an_independent_numpy_trg(results):
    for r in results:
        b = r.beta
        assert _rel(r.log_z, numpy_log_z(b, CHI, STEPS)) < 1e-10
        h = 1e-4
        lz = [numpy_log_z(b + k * h, CHI, STEPS) for k in (-2, -1, 0, 1, 2)]
        # Five-point differences: O(h^4) truncation, O(eps/h) and O(eps/h^2) rounding.
        u_fd = -(lz[0] - 8 * lz[1] + 8 * lz[3] - lz[4]) / (12 * h)
        c_fd = b * b * (-lz[0] + 16 * lz[1] - 30 * lz[2] + 16 * lz[3] - lz[4]) / (12 * h * h)
        assert _rel(r.energy, u_fd) < 1e-8, 1.0 / b
        assert _rel(r.specific_heat, c_fd) < 1e-5, 1.0 / b


def test_onsager(results):
    for r in results:
        t = 1.0 / r.beta
        # TRG at chi = 8 on 2^10 sites: close to the exact solution away from Tc.
        tol = 1e-3 if abs(t - ex.critical_temperature()) > 0.1 else 1e-2
        assert _rel(r.free_energy, -ex.exact_log_z(r.beta) / r.beta) < tol
    tc = ex.critical_temperature()
    assert abs(tc - 2.269185314213022) < 1e-12
    for beta in (0.3, 0.6):
        h = 1e-5
        u_fd = -(ex.exact_log_z(beta + h) - ex.exact_log_z(beta - h)) / (2 * h)
        assert abs(ex.exact_energy(beta) - u_fd) < 1e-8
        c_fd = -beta * beta * (ex.exact_energy(beta + h) - ex.exact_energy(beta - h)) / (2 * h)
        assert abs(ex.exact_specific_heat(beta) - c_fd) < 1e-6


def test_command_line(tmp_path, capsys, results):
    out = tmp_path / "out"
    assert ex.main(["--chi", str(CHI), "--steps", str(STEPS), "--temperatures",
                    ",".join(str(t) for t in TEMPERATURES), "--no-plot", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"chi = {CHI}, {STEPS} RG steps" in printed and "(near Tc)" in printed
    rows = _read_csv(out / "ising_trg.csv")
    assert [row["T"] for row in rows] == TEMPERATURES
    for r, row in zip(results, rows):
        assert _rel(r.specific_heat, row["c_trg"]) < 1e-11
    assert len(_read_csv(out / "ising_trg_exact.csv")) > 500
    for bad in (["--chi", "1"], ["--steps", "61"], ["--mode", "eager", "--checkpoint"],
                ["--checkpoint", "0"], ["--temperatures", "2,-1"]):
        with pytest.raises(SystemExit):
            ex.main(bad)
    assert "usage" in capsys.readouterr().err
