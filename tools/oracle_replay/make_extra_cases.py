#!/usr/bin/python3
"""Writes oracle cases for argument forms the shared dev set does not contain
(scalar second operands, logit's eps, std/var positional forms, reduction dtype,
fill with a complex value, complex inputs of unary ops whose dev cases are real,
and the scans, sorts and layout helpers the dev set lacks; tensorsolve with
dims; hfft2, hfftn, ihfft2 and ihfftn; lu_solve with its pivots under another
seed than ../shared/oracles/lu_solve-pivots), in the schema of ../shared/oracles/case.schema.json.
References come from PyTorch's autograd (Debian's python3-torch); the replay's
unit test runs them (tools.oracle_replay_extra). Regenerate with:
    /usr/bin/python3 tools/oracle_replay/make_extra_cases.py tools/oracle_replay/extra_cases
"""
import json
import os
import sys

import torch

torch.manual_seed(7)
DT = {torch.float64: "float64", torch.float32: "float32",
      torch.complex128: "complex128", torch.complex64: "complex64", torch.int32: "int32"}


def enc(t):
    t = t.detach().contiguous()
    if t.is_complex():
        data = [[float(z.real), float(z.imag)] for z in t.reshape(-1).tolist()]
    elif t.dtype == torch.int32:
        data = [int(z) for z in t.reshape(-1).tolist()]
    else:
        data = [float(z) for z in t.reshape(-1).tolist()]
    return {"dtype": DT[t.dtype], "order": "row_major", "shape": list(t.shape), "data": data}


def case(case_id, op, fn, inputs, args=(), kwargs=None, tol=(1e-10, 1e-8), hvp=True, const=()):
    """`const` names inputs that are not differentiated (integer pivots): they
    carry no direction, vjp or hvp entry."""
    kwargs = kwargs or {}
    recorded = dict(kwargs)
    if "dtype" in kwargs:  # recorded as its name, passed as the dtype
        kwargs = dict(kwargs, dtype=getattr(torch, kwargs["dtype"]))
    names = list(inputs)
    diff = [n for n in names if n not in const]
    xs = {n: inputs[n].clone().requires_grad_(n not in const) for n in names}
    call = lambda env: fn(*[env[n] for n in names], *args, **kwargs)
    y = call(xs)
    vs = {n: torch.randn_like(xs[n]) for n in diff}
    ct = torch.randn_like(y)
    import torch.autograd.forward_ad as fwad
    with fwad.dual_level():
        duals = {n: (fwad.make_dual(xs[n].detach(), vs[n]) if n in vs else xs[n].detach()) for n in names}
        jvp = fwad.unpack_dual(call(duals)).tangent
    vjp = torch.autograd.grad(y, [xs[n] for n in diff], ct, allow_unused=True)
    vjp = [g if g is not None else torch.zeros_like(xs[n]) for g, n in zip(vjp, diff)]
    ref = {"jvp": {"value": enc(jvp)}, "vjp": {n: enc(g) for n, g in zip(diff, vjp)}}
    if hvp:
        xs2 = {n: (xs[n].detach().clone().requires_grad_(n not in const)) for n in names}
        y2 = call(xs2)
        phi = (ct.conj() * y2).sum().real
        gs = torch.autograd.grad(phi, [xs2[n] for n in diff], create_graph=True, allow_unused=True)
        # The directional derivative of phi along v, Re <g, v> (PyTorch's
        # gradient convention makes it Re sum(conj(g) v) for complex inputs).
        inner = sum((g.conj() * vs[n]).real.sum() for g, n in zip(gs, diff)
                    if g is not None and g.requires_grad)
        if isinstance(inner, torch.Tensor):
            hs = torch.autograd.grad(inner, [xs2[n] for n in diff], allow_unused=True)
        else:
            hs = [None] * len(diff)
        ref["hvp"] = {n: enc(h if h is not None else torch.zeros_like(xs2[n])) for n, h in zip(diff, hs)}
    dtype = xs[diff[0]].dtype
    c = {"case_id": case_id, "op": op, "family": "identity", "dtype": DT[dtype],
         "expected_behavior": "success", "observable": {"kind": "identity"},
         "comparison": {"first_order": {"kind": "allclose", "atol": tol[0], "rtol": tol[1]},
                        "second_order": {"kind": "allclose", "atol": tol[0], "rtol": tol[1]}},
         "inputs": {n: enc(xs[n]) for n in names},
         "probes": [{"probe_id": "p0", "direction": {n: enc(vs[n]) for n in diff},
                     "cotangent": {"value": enc(ct)}, "pytorch_ref": ref}]}
    if args:  # complex numbers are recorded as [re, im], like tensor data
        c["op_args"] = [[a.real, a.imag] if isinstance(a, complex) else a for a in args]
    if recorded:
        c["op_kwargs"] = recorded
    return c


def r(*shape, dtype=torch.float64, lo=-2.0, hi=2.0):
    return (torch.rand(*shape, dtype=dtype) * (hi - lo) + lo)


def later_cases():
    """Cases added after the first set, under their own seed so that the
    earlier cases regenerate unchanged."""
    torch.manual_seed(2026)
    f64, c128, f32, c64 = torch.float64, torch.complex128, torch.float32, torch.complex64
    low = {f64: (1e-10, 1e-8), c128: (1e-10, 1e-8), f32: (1e-4, 1e-3), c64: (1e-4, 1e-3)}
    tag = {f64: "f64", c128: "c128", f32: "f32", c64: "c64"}
    out = []

    def rr(*shape, dtype=f64):
        x = torch.randn(*shape, dtype=torch.float64 if not dtype.is_complex else torch.complex128)
        return x.to(dtype)

    # tensorsolve with dims (PyTorch moves them to the end of A).
    for dtype in (f64, c128, f32):
        for k, (ashape, dims) in enumerate((((2, 3, 6), (0, 2)), ((3, 4, 4, 3), (0, 2)),
                                            ((6, 2, 3), (0,)))):
            a = rr(*ashape, dtype=dtype)
            moved = a.movedim(dims, tuple(range(a.ndim - len(dims), a.ndim)))
            b = rr(*moved.shape[:2], dtype=dtype)
            out.append(case(f"tensorsolve_dims_{tag[dtype]}_{k:03d}", "tensorsolve", torch.linalg.tensorsolve,
                            {"a": a, "b": b}, kwargs={"dims": list(dims)}, tol=low[dtype],
                            hvp=dtype in (f64, c128)))
    # The Hermitian FFTs in several dimensions.
    for dtype in (c128, c64):
        real = f64 if dtype == c128 else f32
        t = tag[dtype]
        out += [
            case(f"hfft2_{t}_001", "fft_hfft2", torch.fft.hfft2, {"a": rr(4, 5, dtype=dtype)}, tol=low[dtype], hvp=False),
            case(f"hfft2_{t}_002", "fft_hfft2", torch.fft.hfft2, {"a": rr(2, 3, 4, dtype=dtype)},
                 kwargs={"s": [4, 5], "dim": [0, 2], "norm": "ortho"}, tol=low[dtype], hvp=False),
            case(f"hfftn_{t}_001", "fft_hfftn", torch.fft.hfftn, {"a": rr(3, 4, 5, dtype=dtype)}, tol=low[dtype], hvp=False),
            case(f"hfftn_{t}_002", "fft_hfftn", torch.fft.hfftn, {"a": rr(3, 4, 5, dtype=dtype)},
                 kwargs={"s": [4, 6], "dim": [0, 2], "norm": "forward"}, tol=low[dtype], hvp=False),
            case(f"hfftn_{t}_003", "fft_hfftn", torch.fft.hfftn, {"a": rr(3, 4, dtype=dtype)},
                 kwargs={"s": [5, 7]}, tol=low[dtype], hvp=False),
            case(f"ihfft2_{t}_001", "fft_ihfft2", torch.fft.ihfft2, {"a": rr(4, 6, dtype=real)}, tol=low[dtype], hvp=False),
            case(f"ihfftn_{t}_001", "fft_ihfftn", torch.fft.ihfftn, {"a": rr(3, 4, 5, dtype=real)}, tol=low[dtype], hvp=False),
            case(f"ihfftn_{t}_002", "fft_ihfftn", torch.fft.ihfftn, {"a": rr(3, 4, 5, dtype=real)},
                 kwargs={"s": [3, 6], "dim": [1, 2], "norm": "ortho"}, tol=low[dtype], hvp=False),
            case(f"ihfftn_{t}_003", "fft_ihfftn", torch.fft.ihfftn, {"a": rr(5, 4, dtype=real)},
                 kwargs={"dim": [-1], "norm": "forward"}, tol=low[dtype], hvp=False),
        ]
    # lu_solve with the pivots of the lu_factor that produced LU, over the
    # grid of ../shared/oracles/lu_solve-pivots with another seed.
    k = 0
    for dtype in (f64, c128, f32, c64):
        for batch in ((), (2,), (0,)):
            for n, nrhs in ((3, 4), (1, 1), (3, 0)):
                for left in (True, False):
                    for adjoint in (False, True):
                        a = rr(*batch, n, n, dtype=dtype) + 2.0 * torch.eye(n, dtype=dtype)
                        lu, piv = torch.linalg.lu_factor(a)
                        b = rr(*batch, *((n, nrhs) if left else (nrhs, n)), dtype=dtype)
                        k += 1
                        out.append(case(f"lu_solve_pivots_{tag[dtype]}_{k:03d}", "lu_solve",
                                        lambda lu_, p_, b_, left=left, adjoint=adjoint:
                                        torch.linalg.lu_solve(lu_, p_, b_, left=left, adjoint=adjoint),
                                        {"a": lu, "pivots": piv, "b": b},
                                        kwargs={"left": left, "adjoint": adjoint}, tol=low[dtype],
                                        hvp=dtype in (f64, c128), const=("pivots",)))
    return out


def main(out):
    f64, c128 = torch.float64, torch.complex128
    cases = [
        case("logit_eps_001", "logit", torch.logit, {"a": r(4, 5, lo=0.0, hi=1.0)}, args=(0.2,)),
        case("logit_eps_002", "logit", torch.logit, {"a": r(7, lo=0.0, hi=1.0)}, kwargs={"eps": 0.3}),
        case("std_pos_001", "std", torch.std, {"a": r(3, 4, 5)}, args=(1, False, True)),
        case("var_pos_001", "var", torch.var, {"a": r(3, 4, 5)}, args=([0, 2], True)),
        case("var_pos_002", "var", torch.var, {"a": r(3, 4, dtype=c128)}, args=(0,), kwargs={"correction": 2}, hvp=False),
        case("sum_dtype_001", "sum", torch.sum, {"a": r(3, 4, dtype=torch.float32)}, args=(1,),
             kwargs={"dtype": "float64"}, tol=(1e-6, 1e-5)),
        case("mean_dtype_001", "mean", torch.mean, {"a": r(3, 4)}, args=([0, 1], True)),
        case("pow_scalar_001", "pow", torch.pow, {"a": r(3, 4, lo=0.5, hi=2.0)}, args=(2.5,)),
        case("rpow_scalar_001", "__rpow__", lambda a, b: a.__rpow__(b), {"a": r(5)}, args=(1.7,)),
        case("mul_scalar_001", "mul", torch.mul, {"a": r(2, 3, dtype=c128)}, args=(complex(0.5, -1.5),), hvp=False),
        case("clamp_min_scalar_001", "clamp_min", torch.clamp_min, {"a": r(6)}, args=(0.25,)),
        case("rsub_scalar_001", "rsub", torch.rsub, {"a": r(2, 2)}, args=(3.0,), kwargs={"alpha": 2}),
        case("xlogy_scalar_001", "xlogy", torch.xlogy, {"a": r(5)}, args=(2.5,)),
    ]
    # Complex inputs for the unary ops whose dev-set cases are all real.
    def rc(*shape, dtype=c128):
        return torch.complex(r(*shape), r(*shape)).to(dtype)
    unary = {"abs": torch.abs, "asin": torch.asin, "asinh": torch.asinh, "atan": torch.atan,
             "atanh": torch.atanh, "sin": torch.sin, "sinh": torch.sinh, "sqrt": torch.sqrt,
             "tan": torch.tan, "tanh": torch.tanh,
             "neg": torch.neg, "positive": torch.positive, "sgn": torch.sgn, "angle": torch.angle,
             "conj_physical": torch.conj_physical, "sigmoid": torch.sigmoid, "square": torch.square}
    for name, fn in unary.items():
        for dtype, tol in ((c128, (1e-10, 1e-8)), (torch.complex64, (1e-4, 1e-3))):
            tag = "c128" if dtype == c128 else "c64"
            cases.append(case(f"{name}_{tag}_complex_001", name, fn, {"a": rc(4, 3, dtype=dtype)},
                              tol=tol, hvp=False))
    fill_in = r(3)
    cases.append(case("fill_complex_001", "fill", torch.fill, {"a": fill_in.to(c128)},
                      args=(complex(1.5, -2.0),), hvp=False))
    # Scans, sorting and layout helpers (no dev-set cases). cumprod also with
    # zeros in a lane; sort/topk on distinct values (their derivative is a gather).
    z = r(4, 5)
    z[1, 2] = 0.0
    z[3, 0] = 0.0
    z[3, 4] = 0.0
    sort_values = lambda a, **kw: torch.sort(a, stable=True, **kw).values
    topk_values = lambda a, *args, **kw: torch.topk(a, *args, **kw).values
    cases += [
        case("cumsum_001", "cumsum", torch.cumsum, {"a": r(3, 4, 5)}, args=(1,)),
        case("cumsum_002", "cumsum", torch.cumsum, {"a": r(4, 3, dtype=c128)}, kwargs={"dim": -1}, hvp=False),
        case("cumprod_001", "cumprod", torch.cumprod, {"a": r(3, 4, lo=0.5, hi=1.5)}, args=(0,)),
        case("cumprod_zeros_001", "cumprod", torch.cumprod, {"a": z}, args=(1,), hvp=False),
        case("cumprod_zeros_002", "cumprod", torch.cumprod, {"a": z.t().contiguous()}, args=(0,), hvp=False),
        case("cumprod_002", "cumprod", torch.cumprod, {"a": r(3, 4, dtype=c128)}, args=(1,), hvp=False),
        case("sort_001", "sort", sort_values, {"a": r(4, 6)}, kwargs={"dim": 1}),
        case("sort_002", "sort", sort_values, {"a": r(5, 3)}, kwargs={"dim": 0, "descending": True}),
        case("topk_001", "topk", topk_values, {"a": r(4, 7)}, args=(3,)),
        case("topk_002", "topk", topk_values, {"a": r(6, 2)}, args=(2, 0, False)),
        case("kron_001", "kron", torch.kron, {"a": r(2, 3), "b": r(4, 2)}),
        case("kron_002", "kron", torch.kron, {"a": r(3, dtype=c128), "b": r(2, 2, dtype=c128)}, hvp=False),
        case("trace_001", "trace", torch.trace, {"a": r(4, 3)}),
        case("flip_001", "flip", torch.flip, {"a": r(3, 4, 2)}, args=([0, 2],)),
        case("roll_001", "roll", torch.roll, {"a": r(3, 4)}, args=([1, -2], [0, 1])),
        case("roll_002", "roll", torch.roll, {"a": r(3, 4)}, args=(5,)),
    ]
    cases += later_cases()
    by_op = {}
    for c in cases:
        by_op.setdefault(c["op"], []).append(c)
    for op, cs in by_op.items():
        os.makedirs(os.path.join(out, op), exist_ok=True)
        with open(os.path.join(out, op, "identity.jsonl"), "w") as f:
            for c in cs:
                f.write(json.dumps(c) + "\n")
    print(f"{len(cases)} cases in {len(by_op)} ops written to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "extra_cases")
