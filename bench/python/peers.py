#!/usr/bin/python3
"""PyTorch and NumPy/SciPy peers of the benchmark suite (driven by bench/driver.py).

    peers.py --impl torch|numpy [--threads N] [--quick] [--smoke] [--cases id,...]

Prints one JSON line per case in the format of bench/cases/harness.hpp. Inputs
are the same numbers as ours: our column-major tensor of shape S is here the
row-major array of shape reversed(S) (the same bytes), so our axis d is axis
rank-1-d here. The `numpy` impl also measures the memory floors (variant
"floor": a plain copy of the same bytes).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

# Must match bench/cases/harness.hpp.
def inp(n, off):
    k = np.arange(n, dtype=np.int64)
    return ((k + off * 1000003) * 7919 % 10007) / 10007.0 - 0.5


# Group 15 input domains, (scale, shift): x = scale * inp(n, off) + shift, in
# that order (must match kSpecialDomains in bench/cases/harness.hpp).
SPECIAL_DOMAINS = {
    "lgamma": (20.0, 10.25), "digamma": (20.0, 10.25), "erfinv": (1.98, 0.0),
    "i0e": (40.0, 0.0), "log_ndtr": (20.0, 0.0), "softplus": (20.0, 0.0),
    "silu": (20.0, 0.0), "logsigmoid": (20.0, 0.0), "logaddexp": (20.0, 0.0),
}


def domain_inp(name, n, off):
    scale, shift = SPECIAL_DOMAINS[name]
    return scale * inp(n, off) + shift


def probe_positions(n):
    return [(n - 1) * p // 4 for p in range(5)] if n > 0 else []


def make_check(res):
    res = np.ascontiguousarray(res)
    if np.iscomplexobj(res):  # interleaved real and imaginary parts, as our memory
        res = res.view(np.float64)
    flat = np.ascontiguousarray(np.asarray(res, dtype=np.float64)).ravel()
    return [float(flat.sum())] + [float(flat[q]) for q in probe_positions(flat.size)]


def peer_perm(perm):
    r = len(perm)
    return [r - 1 - perm[r - 1 - i] for i in range(r)]


def quantile(v, p):
    v = sorted(v)
    pos = p * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


SLOW_CALL_NS = 1e9  # kSlowCallNs in harness.hpp


def measure(opts, fn):
    """Same protocol as harness.hpp: warm-up, batches of >= 2/10 ms, median/IQR."""
    if opts.smoke:
        fn()
        return 0.0, 0.0
    target = 2e6 if opts.quick else 10e6
    fn()
    t0 = time.perf_counter_ns()
    fn()
    one = max(time.perf_counter_ns() - t0, 1)
    # a call of a second or more is a slow case: no timed warm-up, 3 samples
    # (5 without --quick)
    slow = one >= SLOW_CALL_NS
    samples = (3 if opts.quick else 5) if slow else (7 if opts.quick else 11)
    batch = max(1, int(target / one))
    # warm-up calls for 30 ms (100 ms without --quick), at most 64 calls
    warmup = 30e6 if opts.quick else 100e6
    w0 = time.perf_counter_ns()
    for _ in range(0 if slow else 64):
        if time.perf_counter_ns() - w0 >= warmup:
            break
        fn()
    per_call = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        per_call.append((time.perf_counter_ns() - t0) / batch)
    return quantile(per_call, 0.5), quantile(per_call, 0.75) - quantile(per_call, 0.25)


class Suite:
    def __init__(self, opts):
        self.opts = opts
        self.impl = opts.impl
        self.wanted = set(opts.cases.split(",")) if opts.cases else None
        if self.impl == "torch":
            import torch

            torch.set_num_threads(opts.threads)
            self.torch = torch

    def selected(self, name, size, variant):
        return self.wanted is None or f"{name}/{size}/{variant}" in self.wanted

    def arr(self, shape, off):
        """Our column-major `shape` input number `off`, in the peer layout."""
        n = int(np.prod(shape))
        a = inp(n, off).reshape(tuple(reversed(shape)))
        return self.torch.from_numpy(a.copy()) if self.impl == "torch" else a

    def to_numpy(self, r):
        if self.impl == "torch":
            return r.resolve_conj().resolve_neg().contiguous().numpy()
        return r

    def run(self, name, size, variant, fn, per_unit=1.0, impl=None):
        if not self.selected(name, size, variant):
            return
        impl = impl or self.impl
        print(f"  {impl} {name} {size} {variant} ({self.opts.threads}T)", file=sys.stderr, flush=True)
        check = make_check(self.to_numpy(fn()))
        med, iqr = measure(self.opts, fn)
        rec = {"case": name, "size": size, "impl": impl, "variant": variant,
               "threads": self.opts.threads, "median_ns": med / per_unit,
               "iqr_ns": iqr / per_unit, "check": check}
        print(json.dumps(rec), flush=True)

    # ---- cases -------------------------------------------------------------

    def matmul(self):
        mm = self.torch.matmul if self.impl == "torch" else np.matmul
        for n in (256, 1024):
            a, b = self.arr([n, n], 1), self.arr([n, n], 2)
            # ours C = A B column-major == (B^T A^T) row-major on the same bytes
            self.run("matmul", str(n), "", lambda: mm(b, a))
        for m, batch in ((4, 1024), (16, 256)):
            a, b = self.arr([m, m, batch], 1), self.arr([m, m, batch], 2)
            self.run("batched_matmul", f"{m}x{m}x{batch}", "", lambda: mm(b, a))

    def einsum(self):
        if self.impl == "torch":
            es = self.torch.einsum
        else:
            def es(spec, x, y):
                return np.einsum(spec, x, y, optimize=True)
        a, b = self.arr([32] * 4, 1), self.arr([32] * 4, 2)
        self.run("einsum_abcd_dbef_acef", "32", "", lambda: es("abcd,dbef->acef", a, b))
        # Unsliced on the peers (an n^4 intermediate); ours runs memory-limited.
        x, y, z = self.arr([20] * 3, 1), self.arr([20] * 3, 2), self.arr([20] * 3, 3)
        if self.impl == "torch":
            def es3():
                return self.torch.einsum("abc,cde,efa->bdf", x, y, z)
        else:
            def es3():
                return np.einsum("abc,cde,efa->bdf", x, y, z, optimize=True)
        self.run("einsum_sliced_abc_cde_efa_bdf", "20", "", es3)

    # Group 8: must match bench/cases/einsum_cases.cpp (instances, input scale).
    NETWORKS = [("str_matrix_chain_multiplication_100", 1.0),
                ("str_mps_varying_inner_product_200", 1.0),
                ("lm_batch_likelihood_sentence_4_4d", 1.25), ("nary_matmul_chain_64", 1.0),
                ("str_nw_mera_closed_120", 1.0)]

    def networks(self):
        """Each instance along its recorded opt_flops path, one pairwise einsum
        per step (torch.einsum; np.einsum with the explicit path of the pair).
        Row-major here: the instance's format_string and shapes are our
        column-major operands reversed (the same bytes)."""
        root = Path(__file__).resolve().parent.parent.parent.parent / "shared/einsum-instances"
        for name, scale in self.NETWORKS:
            f = root / f"{name}.json"
            if not f.exists():
                continue
            inst = json.loads(f.read_text())
            size = str(len(inst["shapes"]))
            if not self.selected(name, size, "recorded"):
                continue
            lhs, out = inst["format_string"].split("->")
            terms = lhs.split(",")
            xs = []
            for k, shape in enumerate(inst["shapes"]):
                a = inp(int(np.prod(shape)), k + 1) * scale
                a = a.reshape(tuple(shape))
                xs.append(self.torch.from_numpy(a.copy()) if self.impl == "torch" else a)
            path = [(min(i, j), max(i, j)) for i, j in inst["paths"]["opt_flops"]["path"]]
            steps = self.pair_steps(terms, out, path)
            if self.impl == "torch":
                es = self.torch.einsum
            else:
                def es(spec, x, y):
                    return np.einsum(spec, x, y, optimize=["einsum_path", (0, 1)])

            def contract():
                lst = list(xs)
                for i, j, spec in steps:
                    y = lst.pop(j)
                    x = lst.pop(i)
                    lst.append(es(spec, x, y))
                return lst[0]

            self.run(name, size, "recorded", contract)

    @staticmethod
    def pair_steps(terms, out, path):
        """Per step (i, j, pairwise equation with local ASCII letters): the
        result keeps the labels the output or a remaining operand has, in
        order of appearance; the last step writes the output's order."""
        lst = list(terms)
        steps = []
        for n, (i, j) in enumerate(path):
            a, b = lst[i], lst[j]
            del lst[j]
            del lst[i]
            if n + 1 == len(path):
                keep = out
            else:
                rest = set("".join(lst)) | set(out)
                keep = "".join(dict.fromkeys(c for c in a + b if c in rest))
            local = {c: chr(ord("a") + k) if k < 26 else chr(ord("A") + k - 26)
                     for k, c in enumerate(dict.fromkeys(a + b))}
            spec = "".join(local[c] for c in a) + "," + "".join(local[c] for c in b) + "->" + \
                "".join(local[c] for c in keep)
            steps.append((i, j, spec))
            lst.append(keep)
        return steps

    def tropical(self):
        """Group 18: ours C = A (max,+) B column-major is, on the same bytes,
        C^T = B^T (max,+) A^T row-major, written as users write a max-plus
        product: the max of a broadcast sum, over row blocks that bound the
        temporary (rows x k x m) to 16 MiB."""
        n = 1024
        for variant, dt in (("f64", np.float64), ("f32", np.float32)):
            if not self.selected("maxplus_gemm", str(n), variant):
                continue
            a, b = inp(n * n, 1).astype(dt), inp(n * n, 2).astype(dt)
            a, b = a.reshape(n, n), b.reshape(n, n)
            rows = max(1, (16 << 20) // (n * n * np.dtype(dt).itemsize))
            if self.impl == "torch":
                t = self.torch
                x, y = t.from_numpy(b), t.from_numpy(a)

                def maxplus():
                    out = t.empty((n, n), dtype=x.dtype)
                    for i in range(0, n, rows):
                        out[i:i + rows] = t.amax(x[i:i + rows, :, None] + y[None], dim=1)
                    return out
            else:
                x, y = b, a

                def maxplus():
                    out = np.empty((n, n), dtype=x.dtype)
                    for i in range(0, n, rows):
                        out[i:i + rows] = np.max(x[i:i + rows, :, None] + y[None], axis=1)
                    return out
            self.run("maxplus_gemm", str(n), variant, maxplus)
        self.spinglass()

    def spinglass(self):
        """Group 18: the ground energy of the same L = 16 +-1 spin glass as
        ours (tropical_cases.cpp: edges row by row, right then down, J = +1
        where inp(edges, 7) >= 0), solved the way a NumPy or PyTorch user
        would: a transfer-matrix dynamic program over the frontier of one
        spin per column (2^16 states), one site at a time."""
        L = 16
        if not self.selected("spinglass_ground", str(L), "square"):
            return
        u = inp(2 * L * (L - 1), 7)
        right, down = np.zeros((L, L)), np.zeros((L, L))
        e = 0
        for r in range(L):
            for c in range(L):
                if c + 1 < L:
                    right[r, c] = 1.0 if u[e] >= 0 else -1.0
                    e += 1
                if r + 1 < L:
                    down[r, c] = 1.0 if u[e] >= 0 else -1.0
                    e += 1
        s = np.array([-1.0, 1.0])
        lib = self.torch if self.impl == "torch" else np
        spins = lib.tensor(s) if self.impl == "torch" else s

        def ground():
            # v[s_{L-1}, ..., s_0] (axis L-1-c holds column c): the best sum
            # over the processed spins for each frontier.
            v = lib.zeros((2,) * L, dtype=lib.float64)
            for r in range(L):
                for c in range(L):
                    ax = L - 1 - c
                    jv = down[r - 1, c] if r > 0 else 0.0
                    vc = lib.movedim(v, ax, -1) if self.impl == "torch" else np.moveaxis(v, ax, -1)
                    pair = jv * spins[:, None] * spins[None, :]  # [s_old, s_new]
                    if self.impl == "torch":
                        new = lib.maximum(vc[..., 0:1] + pair[0], vc[..., 1:2] + pair[1])
                        new = lib.movedim(new, -1, ax)
                    else:
                        new = np.maximum(vc[..., 0:1] + pair[0], vc[..., 1:2] + pair[1])
                        new = np.moveaxis(new, -1, ax)
                    if c > 0:
                        h = right[r, c - 1] * spins[:, None] * spins[None, :]  # [s_new, s_left]
                        shape = [1] * L
                        shape[ax], shape[ax + 1] = 2, 2
                        new = new + h.reshape(shape)
                    v = new
            return -v.max()
        wrap = (lambda x: lib.tensor([x], dtype=lib.float64)) if self.impl == "torch" else \
            (lambda x: np.array([x]))
        self.run("spinglass_ground", str(L), "square", lambda: wrap(float(ground())))

    def elementwise(self):
        t = self.torch if self.impl == "torch" else None
        for lg in (20, 22):
            n = 1 << lg
            a, b = self.arr([n], 1), self.arr([n], 2)
            out = self.arr([n], 3)
            for opname in ("add", "mul"):
                if t is not None:
                    f = getattr(t, opname)
                    self.run(opname, f"2^{lg}", "fresh", lambda: f(a, b))
                    self.run(opname, f"2^{lg}", "into", lambda: f(a, b, out=out))
                else:
                    f = getattr(np, "add" if opname == "add" else "multiply")
                    self.run(opname, f"2^{lg}", "fresh", lambda: f(a, b))
                    self.run(opname, f"2^{lg}", "into", lambda: f(a, b, out=out))
        n = 1 << 22
        a, b, out = self.arr([n], 1), self.arr([n], 2), self.arr([n], 3)
        xp = t if t is not None else np
        cond = xp.less(a, b)
        self.run("neg", "2^22", "into", lambda: xp.negative(a, out=out))
        if t is not None:
            self.run("copy", "2^22", "into", lambda: out.copy_(a))
            # eager: the same two ops as ours; traced: one pass, b + alpha * a
            self.run("axpy", "2^22", "eager", lambda: 0.5 * a + b)
            self.run("axpy", "2^22", "traced", lambda: t.add(b, a, alpha=0.5))
        else:
            self.run("copy", "2^22", "into", lambda: np.copyto(out, a) or out)
            # NumPy has no one-pass form: both rows run its two ops
            self.run("axpy", "2^22", "eager", lambda: 0.5 * a + b)
            self.run("axpy", "2^22", "traced", lambda: 0.5 * a + b)
        self.run("where", "2^22", "fresh", lambda: xp.where(cond, a, b))
        n = 1 << 20
        a, b = self.arr([n], 1), self.arr([n], 2)
        tanh = t.tanh if t is not None else np.tanh

        def chain():
            x = a
            for _ in range(8):
                x = tanh(0.5 * x + b)
            return x

        self.run("tanh_chain", "2^20", "eager", chain)

    def reductions(self):
        x = self.arr([2048, 2048], 1)
        size = "2048x2048"
        self.run("sum_all", size, "", lambda: x.sum())
        # our axis d is peer axis (rank - 1 - d)
        if self.impl == "torch":
            self.run("sum_axis0", size, "", lambda: x.sum(dim=1))
            self.run("sum_axis1", size, "", lambda: x.sum(dim=0))
        else:
            self.run("sum_axis0", size, "", lambda: x.sum(axis=1))
            self.run("sum_axis1", size, "", lambda: x.sum(axis=0))
        self.run("max_all", size, "", lambda: x.max())

    def permutes(self):
        cases = [("2048x2048", [2048, 2048], [1, 0]),
                 ("256x256x64", [256, 256, 64], [2, 0, 1]),
                 ("3^15", [3] * 15, list(range(14, -1, -1)))]
        for size, shape, perm in cases:
            x = self.arr(shape, 1)
            q = peer_perm(perm)
            if self.impl == "torch":
                self.run("permute", size, "", lambda: x.permute(q).contiguous())
            else:
                self.run("permute", size, "", lambda: np.ascontiguousarray(x.transpose(q)))

    def overhead(self):
        if self.impl != "torch":
            return  # the overhead peers are libtorch and PyTorch
        x, y = self.arr([4], 1), self.arr([4], 2)

        def chain():
            z = x
            for _ in range(1000):
                z = z + y
            return z

        self.run("overhead_add_untracked", "4", "", chain, per_unit=1000.0)
        self.run("overhead_small_program", "4", "eager", lambda: (self.torch.exp(x) * y + x).sum())
        # Rows whose tenferro side does not exist yet (AD, einsum): peer only.
        torch = self.torch
        yr = y.clone().requires_grad_(True)

        def recorded():
            z = x
            for _ in range(1000):
                z = z + yr
            return z.detach()

        self.run("overhead_add_recorded", "4", "", recorded, per_unit=1000.0)

        def fwd_bwd():
            z = x
            for _ in range(1000):
                z = z + yr
            (g,) = torch.autograd.grad(z.sum(), yr)
            return g

        self.run("overhead_chain_fwd_bwd", "4", "", fwd_bwd, per_unit=1000.0)
        for n in (2, 64, 512):
            a = self.arr([n, n], 1).requires_grad_(True)
            b = self.arr([n, n], 2).requires_grad_(True)

            def grad_matmul():
                ga, gb = torch.autograd.grad((b @ a).sum(), (a, b))
                return ga + gb

            self.run("overhead_grad_matmul", str(n), "", grad_matmul)
        a2, b2 = self.arr([2, 2], 1), self.arr([2, 2], 2)
        self.run("overhead_einsum_2x2", "2", "", lambda: torch.einsum("ij,jk->ik", b2, a2))

        class AddOne(torch.autograd.Function):
            """The peer of the extension call: a custom Function computing x + 1."""

            @staticmethod
            def forward(ctx, v):
                return v + 1.0

            @staticmethod
            def backward(ctx, g):
                return g

        self.run("overhead_extension_call", "4", "", lambda: AddOne.apply(x))

    def jvp_vjp(self):
        """Case 11: jvp and vjp of two losses (torch.autograd.functional; torch only).
        Result memory: [loss, tangent] for jvp, [loss, cotangents...] for vjp."""
        if self.impl != "torch":
            return
        torch = self.torch
        taf = torch.autograd.functional
        one = torch.tensor(1.0, dtype=torch.float64)

        def flat(*ts):
            return torch.cat([t.reshape(-1) for t in ts])

        n = 256
        # ours A x on column-major A is x @ P on the reversed array P (= A^T)
        p, x = self.arr([n, n], 1), self.arr([n], 2)
        dp, dx = self.arr([n, n], 3), self.arr([n], 4)

        def tanh_ax(pp, xx):
            return torch.tanh(xx @ pp).sum()

        def jvp_ax():
            return flat(*taf.jvp(tanh_ax, (p, x), (dp, dx)))

        def vjp_ax():
            out, (gp, gx) = taf.vjp(tanh_ax, (p, x), one)
            return flat(out, gp, gx)

        self.run("jvp_traced", "256", "tanh_Ax", jvp_ax)
        self.run("vjp_traced", "256", "tanh_Ax", vjp_ax)

        x16, dx16 = self.arr([1 << 16], 1), self.arr([1 << 16], 2)

        def expsin(xx):
            return (torch.exp(torch.sin(xx)) * xx).sum()

        def jvp_es():
            return flat(*taf.jvp(expsin, x16, dx16))

        def vjp_es():
            out, g = taf.vjp(expsin, x16, one)
            return flat(out, g)

        self.run("jvp_traced", "2^16", "expsin_x", jvp_es)
        self.run("vjp_traced", "2^16", "expsin_x", vjp_es)

    def special(self):
        """Group 15: special functions (torch / scipy.special) and activations
        (torch.nn.functional / plain NumPy formulas), 2^20 f64."""
        n, size = 1 << 20, "2^20"

        def x(name, off=1):
            a = domain_inp(name, n, off)
            return self.torch.from_numpy(a) if self.impl == "torch" else a

        if self.impl == "torch":
            t, F = self.torch, self.torch.nn.functional
            direct = {"lgamma": t.lgamma, "digamma": t.digamma, "erfinv": t.erfinv,
                      "i0e": t.special.i0e, "log_ndtr": t.special.log_ndtr}
            eager = {"softplus": F.softplus, "silu": F.silu, "logsigmoid": F.logsigmoid}
            add = t.logaddexp
        else:
            import scipy.special as sp

            direct = {"lgamma": sp.gammaln, "digamma": sp.psi, "erfinv": sp.erfinv,
                      "i0e": sp.i0e, "log_ndtr": sp.log_ndtr}
            # NumPy has no activations: the straightforward vectorised formulas
            eager = {"softplus": lambda v: np.logaddexp(0.0, v),
                     "silu": lambda v: v / (1.0 + np.exp(-v)),
                     "logsigmoid": lambda v: -np.logaddexp(0.0, -v)}
            add = np.logaddexp
        for variant, table in (("direct", direct), ("eager", eager)):
            for name, f in table.items():
                if self.selected(name, size, variant):
                    v = x(name)
                    self.run(name, size, variant, lambda: f(v))
        if self.selected("logaddexp", size, "direct"):
            a, b = x("logaddexp", 1), x("logaddexp", 2)
            self.run("logaddexp", size, "direct", lambda: add(a, b))

    def linalg(self):
        """Groups 9 and 10 (f64): our column-major matrix M is the array M^T
        here, so every call is arranged to return the transpose of our result
        (the same bytes). Inputs as in bench/cases/linalg_cases.cpp."""
        torch = self.torch if self.impl == "torch" else None
        n = 256

        def general(m, off):  # our A = input + m I, seen as A^T
            return inp(m * m, off).reshape(m, m) + m * np.eye(m)

        def spd(m, off):  # our M M^T + m I (symmetric: the same array)
            mt = inp(m * m, off).reshape(m, m)
            return mt.T @ mt + m * np.eye(m)

        def T(a):
            return torch.from_numpy(np.ascontiguousarray(a)) if torch else a

        s1, g1, g3, s4 = T(spd(n, 1)), T(general(n, 1)), T(general(n, 3)), T(spd(n, 4))
        if torch:
            L = torch.linalg
            self.run("cholesky", "256", "", lambda: L.cholesky(s1, upper=True))
            for k in (1, 16):
                b = T(inp(n * k, 2).reshape(k, n))
                self.run("solve", "256", f"{k}rhs", lambda: L.solve(g1, b, left=False))
            self.run("svd", "256", "values", lambda: L.svdvals(g3))
            self.run("svd", "256", "full", lambda: L.svd(g3, full_matrices=False)[1])
            self.run("qr", "256", "", lambda: L.qr(g3.mT)[1].mT)
            self.run("eigh", "256", "values", lambda: L.eigvalsh(s4))
            self.run("eigh", "256", "full", lambda: L.eigh(s4)[0])
        else:
            import scipy.linalg as sl

            self.run("cholesky", "256", "", lambda: sl.cholesky(s1, lower=False))
            for k in (1, 16):
                b = inp(n * k, 2).reshape(k, n)
                self.run("solve", "256", f"{k}rhs", lambda: np.linalg.solve(g1.T, b.T).T)
            self.run("svd", "256", "values", lambda: np.linalg.svd(g3, compute_uv=False))
            self.run("svd", "256", "full", lambda: np.linalg.svd(g3, full_matrices=False)[1])
            self.run("qr", "256", "", lambda: np.linalg.qr(g3.T)[1].T)
            self.run("eigh", "256", "values", lambda: np.linalg.eigvalsh(s4))
            self.run("eigh", "256", "full", lambda: np.linalg.eigh(s4)[0])

        # c128 at 256: complex inputs are the doubles of inp(2 count, off) viewed as
        # complex128; our general M is M^T here (not conjugated), our Hermitian
        # H = M M^H + n I is H^T = conj(M) M^T.
        def cinp2(m, off):
            return inp(2 * m * m, off).view(np.complex128).reshape(m, m)

        def cgeneral(m, off):
            return cinp2(m, off) + m * np.eye(m)

        def cherm(m, off):
            mt = cinp2(m, off)
            return mt.conj().T @ mt + m * np.eye(m)

        h1, c1, c3, h4 = T(cherm(n, 1)), T(cgeneral(n, 1)), T(cgeneral(n, 3)), T(cherm(n, 4))

        def crhs(k):
            return T(inp(2 * n * k, 2).view(np.complex128).reshape(k, n))

        if torch:
            # upper of conj(H) = (L^T) as an array: our L's bytes
            self.run("cholesky", "256", "c128", lambda: L.cholesky(h1, upper=True))
            for k in (1, 16):
                cb = crhs(k)
                self.run("solve", "256", f"c128-{k}rhs", lambda: L.solve(c1, cb, left=False))
            self.run("svd", "256", "c128-values", lambda: L.svdvals(c3))
            self.run("svd", "256", "c128-full", lambda: L.svd(c3, full_matrices=False)[1])
            self.run("qr", "256", "c128", lambda: L.qr(c3.mT)[1].mT)
            self.run("eigh", "256", "c128-values", lambda: L.eigvalsh(h4))
            self.run("eigh", "256", "c128-full", lambda: L.eigh(h4)[0])
        else:
            self.run("cholesky", "256", "c128", lambda: sl.cholesky(h1, lower=False))
            for k in (1, 16):
                cb = crhs(k)
                self.run("solve", "256", f"c128-{k}rhs", lambda: np.linalg.solve(c1.T, cb.T).T)
            self.run("svd", "256", "c128-values", lambda: np.linalg.svd(c3, compute_uv=False))
            self.run("svd", "256", "c128-full",
                     lambda: np.linalg.svd(c3, full_matrices=False)[1])
            self.run("qr", "256", "c128", lambda: np.linalg.qr(c3.T)[1].T)
            self.run("eigh", "256", "c128-values", lambda: np.linalg.eigvalsh(h4))
            self.run("eigh", "256", "c128-full", lambda: np.linalg.eigh(h4)[0])

        m, batch, bs = 8, 4096, "8x8x4096"
        gb = T(np.stack([general(m, 10 + b) for b in range(batch)]))
        pb = T(np.stack([spd(m, 10 + b) for b in range(batch)]))
        rb = T(inp(m * batch, 7).reshape(batch, 1, m))
        if torch:
            self.run("svd", bs, "values", lambda: L.svdvals(gb))
            self.run("eigh", bs, "values", lambda: L.eigvalsh(pb))
            self.run("qr", bs, "", lambda: L.qr(gb.mT)[1].mT)
            self.run("solve", bs, "1rhs", lambda: L.solve(gb, rb, left=False))

            def grad_of(f, x):
                x = x.clone().requires_grad_(True)
                return lambda: torch.autograd.grad(f(x), x)[0]

            self.run("grad_svdvals_sum", "256", "", grad_of(lambda x: L.svdvals(x).sum(), g3))
            self.run("grad_eigvalsh_sum", "256", "", grad_of(lambda x: L.eigvalsh(x).sum(), s4))
            bvec = T(inp(n, 2).reshape(n, 1))
            self.run("grad_solve_sum", "256", "",
                     grad_of(lambda y: L.solve(g1.mT, y).sum(), bvec))

            def qr_sum(y):
                q, r = L.qr(y.mT)
                return q.sum() + r.sum()

            self.run("grad_qr_sum", "256", "", grad_of(qr_sum, g3))
            self.linalg_jvp_vjp(g1, g3, s4, bvec)
        else:
            tr = (0, 2, 1)
            self.run("svd", bs, "values", lambda: np.linalg.svd(gb, compute_uv=False))
            self.run("eigh", bs, "values", lambda: np.linalg.eigvalsh(pb))
            self.run("qr", bs, "", lambda: np.linalg.qr(gb.transpose(tr))[1].transpose(tr))
            self.run("solve", bs, "1rhs",
                     lambda: np.linalg.solve(gb.transpose(tr), rb.transpose(tr)).transpose(tr))

    def linalg_jvp_vjp(self, g1, g3, s4, bvec):
        """Group 10, traced rows: jvp and vjp of sum(svdvals), sum(eigvalsh),
        sum(Q) + sum(R), sum(solve) by torch.autograd.functional (torch only).
        Result memory as group 11: [loss, tangent] and [loss, cotangents...]."""
        torch = self.torch
        L, taf = torch.linalg, torch.autograd.functional
        n = 256
        one = torch.tensor(1.0, dtype=torch.float64)
        da = self.arr([n, n], 5)  # our dA, seen as dA^T
        ds = da + da.mT  # symmetric
        db = self.arr([n, 1], 6)

        def flat(*ts):
            return torch.cat([t.reshape(-1) for t in ts])

        def qr_sum(y):
            q, r = L.qr(y.mT)
            return q.sum() + r.sum()

        losses = [("svdvals_sum", lambda y: L.svdvals(y).sum(), (g3,), (da,)),
                  ("eigvalsh_sum", lambda y: L.eigvalsh(y).sum(), (s4,), (ds,)),
                  ("qr_sum", qr_sum, (g3,), (da,)),
                  ("solve_sum", lambda a, b: L.solve(a.mT, b.mT).sum(), (g1, bvec.mT),
                   (da, db))]
        for name, f, primals, tangents in losses:
            def jv(f=f, primals=primals, tangents=tangents):
                return flat(*taf.jvp(f, primals, tangents))

            def vj(f=f, primals=primals):
                out, gs = taf.vjp(f, primals, one)
                return flat(out, *gs)

            self.run("jvp_traced", "256", name, jv)
            self.run("vjp_traced", "256", name, vj)

    def fft(self):
        """Group 12 (bench/cases/fft_cases.cpp): complex inputs are the doubles
        of inp(2 n, off) viewed as complex128; our axis 0 of [1024, 128] is the
        last axis of the (128, 1024) array here, our 128^3 fftn is over all axes."""
        def cinp(shape, off):
            n = int(np.prod(shape))
            a = inp(2 * n, off).view(np.complex128).reshape(tuple(reversed(shape)))
            return self.torch.from_numpy(a.copy()) if self.impl == "torch" else a

        F = self.torch.fft if self.impl == "torch" else np.fft
        n = 1 << 20
        x = cinp([n], 1)
        self.run("fft", "2^20", "c128", lambda: F.fft(x))
        r = self.arr([n], 1)
        self.run("rfft", "2^20", "f64", lambda: F.rfft(r))
        b = cinp([1024, 128], 1)
        self.run("fft", "1024x128", "axis0", lambda: F.fft(b, axis=-1) if self.impl == "numpy"
                 else F.fft(b, dim=-1))
        c = cinp([128, 128, 128], 1)
        self.run("fftn", "128^3", "c128", lambda: F.fftn(c))
    def scan_sort(self):
        """Group 16: cumsum along each axis, stable sorts and top-16 (our axis d = peer axis rank-1-d)."""
        x = self.arr([2048, 2048], 1)
        v, m = self.arr([1 << 20], 2), self.arr([1024, 1024], 3)
        if self.impl == "torch":
            t = self.torch
            self.run("cumsum_axis0", "2048x2048", "", lambda: t.cumsum(x, dim=1))
            self.run("cumsum_axis1", "2048x2048", "", lambda: t.cumsum(x, dim=0))
            self.run("sort", "2^20", "", lambda: t.sort(v, stable=True).values)
            self.run("topk", "2^20", "k16", lambda: t.topk(v, 16).values)
            self.run("sort_axis0", "1024x1024", "", lambda: t.sort(m, dim=1, stable=True).values)
        else:
            def top16():
                part = v[np.argpartition(v, -16)[-16:]]
                return part[np.argsort(-part, kind="stable")]

            self.run("cumsum_axis0", "2048x2048", "", lambda: np.cumsum(x, axis=1))
            self.run("cumsum_axis1", "2048x2048", "", lambda: np.cumsum(x, axis=0))
            self.run("sort", "2^20", "", lambda: np.sort(v, kind="stable"))
            self.run("topk", "2^20", "k16", top16)
            self.run("sort_axis0", "1024x1024", "", lambda: np.sort(m, axis=1, kind="stable"))

    def floors(self):
        """Memory floors: a copy moving the same bytes; NumPy's at 1T, and
        PyTorch's `copy_` (split over the threads) at 2T, NumPy copying on
        one thread."""
        # add/mul read two arrays and write one: a copy of 1.5 n moves as much
        for n in (3 << 19, 3 << 21, 1 << 22, 3**15):
            if self.impl == "numpy" and self.opts.threads == 1:
                src, dst = inp(n, 1), inp(n, 2)
                self.run("floor_copy", str(n), "floor", lambda: np.copyto(dst, src) or dst)
            elif self.impl == "torch" and self.opts.threads == 2:
                src, dst = self.arr([n], 1), self.arr([n], 2)
                self.run("floor_copy", str(n), "floor", lambda: dst.copy_(src))

    def all(self):
        self.matmul()
        self.einsum()
        self.networks()
        self.elementwise()
        self.reductions()
        self.permutes()
        self.overhead()
        self.jvp_vjp()
        self.special()
        self.linalg()
        self.fft()
        self.scan_sort()
        self.tropical()
        self.floors()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--impl", choices=["torch", "numpy"], required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--cases", default="")
    opts = p.parse_args()
    Suite(opts).all()


if __name__ == "__main__":
    main()
