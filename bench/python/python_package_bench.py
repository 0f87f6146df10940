#!/usr/bin/python3
"""Group 17 of the benchmark suite: the Python package `tenferro` against the
same user code in PyTorch and NumPy (driven by bench/driver.py).

    python_package_bench.py --impl tenferro|torch|numpy [--threads N] [--quick]
                            [--smoke] [--cases id,...] [--build-dir DIR]

Prints one JSON line per case in the format of bench/cases/harness.hpp, timed
with the protocol of bench/python/peers.py (its `measure`). Every side is a
Python program calling its library's Python API, one call of the row per
timed call. The `tenferro` side imports the package from DIR/python (the
bench build configures it with -DTENFERRO_BUILD_PYTHON=ON).

Rows (Python/NumPy semantics on every side, float64):

- py_add_untracked/4: x + y, 4 elements, no AD.
- py_add_recorded_backward/4: z = x + y with y requiring grad, z.backward(ones),
  y.grad (cleared first).
- py_grad_matmul/2: the gradients of sum(A @ B) in A and B, 2x2
  (tenferro.autograd.grad; torch.autograd.grad).
- py_einsum_2x2/2: einsum("ij,jk->ik") of two 2x2 matrices.
- py_numpy_roundtrip/2^20: from_numpy(a).numpy() (zero copies on both sides).
- py_vmps/L8D4/lbfgs: a user's variational MPS: the Heisenberg chain's energy
  <psi|H|psi>/<psi|psi> (L = 8 sites, open, MPO of bond dimension 5, MPS of
  bond dimension D = 4, one 4-operand einsum per site for each of H and the
  norm), minimised from a fixed start by L-BFGS (tenferro.optim.LBFGS and
  torch.optim.LBFGS, strong Wolfe line search, at most 40 iterations, the
  closure clears the grads, evaluates, calls backward()).
- py_vmps/L8D4/gd: the same energy, 40 steps of plain gradient descent with
  the functional gradient (tenferro.autograd.grad; torch.autograd.grad).

The check of a row is its result (sum and five probes, bench/driver.py); the
vMPS rows return [final energy, energy evaluations].
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import inp, make_check, measure  # noqa: E402  (same inputs and protocol)

ROOT = Path(__file__).resolve().parent.parent.parent

VMPS_SITES, VMPS_BOND, VMPS_ITERATIONS, VMPS_LR = 8, 4, 40, 0.05


def heisenberg_mpo():
    """W[w_left, w_right, s_out, s_in] of H = sum_i S_i . S_{i+1}, bond 5;
    the chain starts in w = 4 and ends in w = 0."""
    sp = np.array([[0.0, 1.0], [0.0, 0.0]])
    sz = np.diag([0.5, -0.5])
    eye = np.eye(2)
    w = np.zeros((5, 5, 2, 2))
    w[0, 0] = eye
    w[1, 0], w[2, 0], w[3, 0] = sp, sp.T, sz
    w[4, 1], w[4, 2], w[4, 3], w[4, 4] = 0.5 * sp.T, 0.5 * sp, sz, eye
    return w


def vmps_start():
    """The initial MPS tensors A[i] (left bond, spin, right bond), fixed numbers."""
    tensors = []
    for i in range(VMPS_SITES):
        left = 1 if i == 0 else VMPS_BOND
        right = 1 if i == VMPS_SITES - 1 else VMPS_BOND
        tensors.append(inp(left * 2 * right, i + 1).reshape(left, 2, right) + 0.25)
    return tensors


class Bench:
    def __init__(self, opts):
        self.opts = opts
        self.impl = opts.impl
        self.wanted = set(opts.cases.split(",")) if opts.cases else None
        if self.impl == "tenferro":
            sys.path.insert(0, str(Path(opts.build_dir).resolve() / "python"))
            import tenferro

            tenferro.set_num_threads(opts.threads)
            self.lib = tenferro
        elif self.impl == "torch":
            import torch

            torch.set_num_threads(opts.threads)
            self.lib = torch
        else:
            self.lib = np

    def selected(self, name, size, variant):
        return self.wanted is None or f"{name}/{size}/{variant}" in self.wanted

    def array(self, a, requires_grad=False):
        """A tensor of this side holding the NumPy array's numbers (a copy)."""
        if self.impl == "numpy":
            return np.array(a)
        if self.impl == "torch":
            t = self.lib.tensor(np.array(a), dtype=self.lib.float64)
            return t.requires_grad_(True) if requires_grad else t
        return self.lib.tensor(np.array(a), requires_grad=requires_grad)

    def to_numpy(self, r):
        if isinstance(r, np.ndarray):
            return r
        if self.impl == "torch":
            return r.detach().contiguous().numpy()
        if self.impl == "tenferro":
            return np.asarray(r.detach())
        return np.asarray(r)

    def run(self, name, size, variant, fn):
        if not self.selected(name, size, variant):
            return
        print(f"  {self.impl} {name} {size} {variant} ({self.opts.threads}T)", file=sys.stderr,
              flush=True)
        check = make_check(self.to_numpy(fn()))
        med, iqr = measure(self.opts, fn)
        print(json.dumps({"case": name, "size": size, "impl": self.impl, "variant": variant,
                          "threads": self.opts.threads, "median_ns": med, "iqr_ns": iqr,
                          "check": check}), flush=True)

    # ---- rows ----------------------------------------------------------------------------

    def small_ops(self):
        lib, impl = self.lib, self.impl
        x, y = self.array(inp(4, 1)), self.array(inp(4, 2))
        self.run("py_add_untracked", "4", "", lambda: x + y)

        a, b = self.array(inp(4, 1).reshape(2, 2)), self.array(inp(4, 2).reshape(2, 2))
        self.run("py_einsum_2x2", "2", "", lambda: lib.einsum("ij,jk->ik", a, b))
        if impl == "numpy":
            return

        yr = self.array(inp(4, 2), requires_grad=True)
        seed = self.array(np.ones(4))

        def add_backward():
            yr.grad = None
            z = x + yr
            z.backward(seed)
            return yr.grad

        self.run("py_add_recorded_backward", "4", "", add_backward)

        if impl == "torch":
            ar = self.array(inp(4, 1).reshape(2, 2), requires_grad=True)
            br = self.array(inp(4, 2).reshape(2, 2), requires_grad=True)

            def grad_matmul():
                ga, gb = lib.autograd.grad((ar @ br).sum(), (ar, br))
                return ga + gb
        else:
            def grad_matmul():
                ga, gb = lib.autograd.grad(lambda p, q: (p @ q).sum(), a, b)
                return ga + gb

        self.run("py_grad_matmul", "2", "", grad_matmul)

        big = inp(1 << 20, 3)
        self.run("py_numpy_roundtrip", "2^20", "", lambda: lib.from_numpy(big).numpy())

    def vmps(self):
        if self.impl == "numpy":
            return
        lib = self.lib
        w = self.array(heisenberg_mpo())
        start = vmps_start()
        left_h = np.zeros((1, 5, 1))
        left_h[0, 4, 0] = 1.0
        left_h, left_n = self.array(left_h), self.array(np.ones((1, 1)))
        evaluations = [0]

        def energy(tensors):
            evaluations[0] += 1
            env_h, env_n = left_h, left_n
            for a in tensors:
                env_h = lib.einsum("awb,asc,wvst,btd->cvd", env_h, a, w, a)
                env_n = lib.einsum("ab,asc,bsd->cd", env_n, a, a)
            return env_h[0, 0, 0] / env_n[0, 0]

        def result(e):
            return np.array([float(e), float(evaluations[0])])

        lbfgs = getattr(getattr(lib, "optim", None), "LBFGS", None)
        if lbfgs is not None:
            def lbfgs_loop():
                evaluations[0] = 0
                params = [self.array(a, requires_grad=True) for a in start]
                opt = lbfgs(params, max_iter=VMPS_ITERATIONS, line_search_fn="strong_wolfe")

                def closure():
                    opt.zero_grad()
                    e = energy(params)
                    e.backward()
                    return e

                opt.step(closure)
                return result(energy(params).detach())

            self.run("py_vmps", f"L{VMPS_SITES}D{VMPS_BOND}", "lbfgs", lbfgs_loop)
        else:
            print(f"  {self.impl}: no optim.LBFGS; the py_vmps lbfgs row is n/a", file=sys.stderr)

        def gd_loop():
            evaluations[0] = 0
            if self.impl == "torch":
                params = [self.array(a, requires_grad=True) for a in start]
                for _ in range(VMPS_ITERATIONS):
                    grads = lib.autograd.grad(energy(params), params)
                    params = [(p - VMPS_LR * g).detach().requires_grad_(True)
                              for p, g in zip(params, grads)]
            else:
                params = [self.array(a) for a in start]
                for _ in range(VMPS_ITERATIONS):
                    grads = lib.autograd.grad(lambda *ps: energy(list(ps)), *params)
                    params = [(p - VMPS_LR * g).detach() for p, g in zip(params, grads)]
            with lib.no_grad():
                return result(energy(params))

        self.run("py_vmps", f"L{VMPS_SITES}D{VMPS_BOND}", "gd", gd_loop)

    def all(self):
        self.small_ops()
        self.vmps()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--impl", choices=["tenferro", "torch", "numpy"], required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--cases", default="")
    p.add_argument("--build-dir", default=str(ROOT / "build-bench"))
    Bench(p.parse_args()).all()


if __name__ == "__main__":
    main()
