"""tenferro: dense (complex) tensors, LAPACK-grade linear algebra, einsum and
FFT with exact automatic differentiation, from Python.

Tensors follow NumPy's semantics: shapes, axis numbers, broadcasting, C-order
reshape, indexing and dtype promotion behave as in NumPy, and memory is shared
with NumPy arrays and DLPack producers (torch) without copies. Gradients work
as in PyTorch: ``requires_grad``, ``.backward()``, ``.grad``, ``no_grad()``,
and the functional ``tenferro.autograd.grad/vjp/jvp/hvp``.

Everything runs on one CPU runtime per process (threads: one per core;
``tenferro.set_num_threads``). See docs/python.md.
"""

from __future__ import annotations

import builtins as _builtins
import functools as _functools
import operator as _operator

import numpy as _np

from . import errors
from .errors import Error
from . import _tenferro as _C
from ._tenferro import (  # noqa: F401  (re-exported)
    Tensor,
    TracedTensor,
    Program,
    PreparedProgram,
    checkpoint,
    Generator,
    no_grad,
    is_grad_enabled,
    from_numpy,
    from_dlpack,
    asarray,
    as_dtype,
    result_type,
    set_num_threads,
    get_num_threads,
    matmul,
    where,
    clip,
    astype,
    concatenate,
    stack,
    cumsum,
    cumprod,
    sort,
    argsort,
    flip,
    tril,
    triu,
    trace,
    kron,
    zeros,
    ones,
    empty,
    full,
    eye,
    linspace,
    argmax,
    argmin,
    autograd,
    linalg,
    fft,
)

dtype = _C.dtype
bool_ = _C.dtype.bool
int32 = _C.dtype.int32
int64 = _C.dtype.int64
float32 = _C.dtype.float32
float64 = _C.dtype.float64
complex64 = _C.dtype.complex64
complex128 = _C.dtype.complex128

__version__ = "0.3.0"

# ---- elementwise functions, generated from the C++ op lists -----------------------

_ELEMENTWISE = [name for name in dir(_C) if not name.startswith("_") and callable(getattr(_C, name))]
for _name in _ELEMENTWISE:
    if _name not in globals():
        globals()[_name] = getattr(_C, _name)
del _name

# NumPy's names for some of them.
absolute = _C.abs
negative = _C.neg
multiply = _C.mul
subtract = _C.sub
divide = _C.div
true_divide = _C.div
power = _C.pow
conjugate = _C.conj
equal, not_equal, less, less_equal, greater, greater_equal = (
    _C.eq, _C.ne, _C.lt, _C.le, _C.gt, _C.ge)
arctan2 = _C.atan2
arcsin, arccos, arctan = _C.asin, _C.acos, _C.atan
arcsinh, arccosh, arctanh = _C.asinh, _C.acosh, _C.atanh
mod = _C.remainder
isfinite, isnan = _C.isfinite, _C.isnan


# ---- construction ----------------------------------------------------------------


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays,
    tensors), like ``torch.tensor`` / ``np.array``."""
    t = asarray(data, dtype=dtype)
    if isinstance(data, Tensor) or isinstance(data, _np.ndarray) or hasattr(data, "__dlpack__"):
        t = t.detach().copy()
    if requires_grad:
        t.requires_grad_()
    return t


def arange(start, stop=None, step=1, dtype=None) -> Tensor:
    """NumPy's arange: int64 when every argument is an integer, else float64."""
    ints = _builtins.all(isinstance(v, (int, _np.integer)) for v in (start, stop, step) if v is not None)
    return _C.arange(start, stop, step, dtype, ints)


def zeros_like(x, dtype=None) -> Tensor:
    x = asarray(x)
    return zeros(x.shape, dtype=x.dtype if dtype is None else dtype)


def ones_like(x, dtype=None) -> Tensor:
    x = asarray(x)
    return ones(x.shape, dtype=x.dtype if dtype is None else dtype)


def full_like(x, fill_value, dtype=None) -> Tensor:
    x = asarray(x)
    return full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype)


class random:  # noqa: N801  (a namespace, as numpy.random)
    """Seeded generators: ``g = tenferro.random.default_rng(0)``, then
    ``g.random(shape)`` and ``g.standard_normal(shape, dtype=...)``."""

    Generator = Generator

    @staticmethod
    def default_rng(seed: int = 0) -> Generator:
        return Generator(seed)


# ---- reductions ---------------------------------------------------------------------


def _reducer(op):
    def f(x, axis=None, keepdims=False, dtype=None):
        t = asarray(x)
        if dtype is not None:
            t = astype(t, dtype)
        return _C._reduce(op, t, axis, keepdims)

    f.__name__ = op
    f.__doc__ = f"NumPy's {op} over ``axis`` (None: every axis)."
    return f


sum = _reducer("sum")  # noqa: A001
prod = _reducer("prod")
mean = _reducer("mean")
max = amax = _reducer("max")  # noqa: A001
min = amin = _reducer("min")  # noqa: A001
all = _reducer("all")  # noqa: A001
any = _reducer("any")  # noqa: A001
logsumexp = _reducer("logsumexp")


def var(x, axis=None, ddof=0, keepdims=False) -> Tensor:
    """NumPy's var (ddof=0 by default, as NumPy; torch's default is 1)."""
    return _C._var(asarray(x), axis, float(ddof), keepdims, False)


def std(x, axis=None, ddof=0, keepdims=False) -> Tensor:
    return _C._var(asarray(x), axis, float(ddof), keepdims, True)


# ---- shape functions ------------------------------------------------------------------


def reshape(x, shape, order="C") -> Tensor:
    """NumPy's reshape: C order by default (a view when the strides allow it,
    else a copy); order="F" reads and writes in column-major order."""
    return asarray(x)._reshape(shape if not isinstance(shape, int) else (shape,), order)


def transpose(x, axes=None) -> Tensor:
    x = asarray(x)
    if axes is None:
        return x.T
    return x._permute(list(axes))


permute_dims = transpose


def swapaxes(x, axis1, axis2) -> Tensor:
    x = asarray(x)
    perm = list(range(x.ndim))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return x._permute(perm)


def moveaxis(x, source, destination) -> Tensor:
    x = asarray(x)
    perm = [a for a in range(x.ndim) if a != source % x.ndim]
    perm.insert(destination % x.ndim, source % x.ndim)
    return x._permute(perm)


def expand_dims(x, axis) -> Tensor:
    return asarray(x)._unsqueeze(axis)


def squeeze(x, axis=None) -> Tensor:
    return asarray(x).squeeze(axis)


def broadcast_to(x, shape) -> Tensor:
    return asarray(x).broadcast_to(shape)


def ravel(x) -> Tensor:
    return reshape(x, (-1,))


def diagonal(x, offset=0, axis1=0, axis2=1) -> Tensor:
    return asarray(x).diagonal(offset, axis1, axis2)


def take(x, indices, axis=None) -> Tensor:
    x = asarray(x)
    if axis is None:
        x, axis = ravel(x), 0
    idx = asarray(indices)
    flat = ravel(idx)
    out = x._index_select(axis, flat)
    if idx.ndim != 1:
        shape = list(x.shape)
        a = axis % x.ndim
        shape[a:a + 1] = list(idx.shape)
        out = out._reshape(tuple(shape), "C")
    return out


def dot(a, b) -> Tensor:
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return matmul(a, b)


def vdot(a, b) -> Tensor:
    return sum(conj(ravel(asarray(a))) * ravel(asarray(b)))


def inner(a, b) -> Tensor:
    return sum(asarray(a) * asarray(b), axis=-1)


def outer(a, b) -> Tensor:
    return ravel(a)[:, None] * ravel(b)[None, :]


def allclose(a, b, rtol=1e-05, atol=1e-08) -> bool:
    return bool(_np.allclose(_np.asarray(asarray(a).detach()), _np.asarray(asarray(b).detach()),
                             rtol=rtol, atol=atol))


# ---- einsum ---------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@_functools.lru_cache(maxsize=1024)
def _einsum_equation(equation: str, ndims: tuple) -> str:
    """NumPy's einsum equation made explicit (ellipses expanded into letters,
    the implicit output spelled out), each term reversed for the C++ axes."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
        explicit = True
    else:
        lhs, out, explicit = eq, "", False
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise errors.InvalidArgument(
            f"[einsum] the equation has {len(terms)} operand terms but {len(ndims)} operands were given")
    used = set(c for c in eq if c.isalpha())
    spare = [c for c in _LETTERS if c not in used]
    ell = 0
    for t, n in zip(terms, ndims):
        if "..." in t:
            ell = _builtins.max(ell, n - (len(t) - 3))
    if ell > len(spare):
        raise errors.InvalidArgument("[einsum] too many axes under '...'")
    ell_letters = "".join(spare[:ell])
    expanded = []
    for t, n in zip(terms, ndims):
        if "..." in t:
            k = n - (len(t) - 3)
            if k < 0:
                raise errors.RankMismatch(
                    f"[einsum] term '{t}' has more labels than its operand has axes ({n})")
            t = t.replace("...", ell_letters[ell - k:] if k else "")
        expanded.append(t)
    if explicit:
        out = out.replace("...", ell_letters)
    else:
        counts = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        # NumPy sorts labels by code point (upper case first).
        out = ell_letters + "".join(sorted(c for c, k in counts.items()
                                           if k == 1 and c not in ell_letters))
    return ",".join(t[::-1] for t in expanded) + "->" + out[::-1]


def einsum(equation: str, *operands, strategy=None, path=None, budget_ms=None, seed=0,
           memory_limit=None, optimize=None, search_work=None, semiring=None) -> Tensor:
    """NumPy's einsum (ellipses, implicit output) over tenferro's contraction
    planner. ``strategy`` ("auto", "greedy", "anneal", "optimal"), ``path``
    (pairs of operand positions, NumPy's contract-path format), ``budget_ms``
    (an optional wall-clock cap), ``search_work`` (the deterministic work
    budget, default 1e9 units), ``seed`` and ``memory_limit`` (bytes; slices
    the contraction) are the C++ EinsumOptions. ``semiring`` ("max_plus",
    "min_plus", "or_and"; default the ordinary sum of products) contracts
    over a tropical or boolean semiring (docs/tropical.md); its gradients
    route through the winning terms. ``optimize`` is accepted for NumPy compatibility and
    ignored (the planner always optimises)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [o if type(o) is Tensor else asarray(o) for o in operands]
    eq = _einsum_equation(equation, tuple(t.ndim for t in ts))
    return _C._einsum(eq, ts, strategy, path, budget_ms, seed, memory_limit, search_work,
                      semiring)


def einsum_count(equation: str, *operands, semiring="max_plus", memory_limit=None):
    """The counting tropical einsum: ``(value, count)``, the contraction over
    ``semiring`` ("max_plus" or "min_plus") and per element the number of
    terms attaining it (float64 holding integers)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [o if type(o) is Tensor else asarray(o) for o in operands]
    eq = _einsum_equation(equation, tuple(t.ndim for t in ts))
    return _C._einsum_count(eq, ts, semiring, memory_limit)


def einsum_path(equation: str, *operands, strategy=None, budget_ms=None, seed=0,
                memory_limit=None, search_work=None) -> dict:
    """The contraction plan einsum would use: a dict with ``path`` (pairs of
    operand positions), ``flops``, ``largest_intermediate``, ``search_ms``,
    ``search_cut_short``, ``search_work``, ``slices`` and ``sliced_flops``. Operands may be tensors, arrays or shapes."""
    shapes = []
    for o in operands:
        if isinstance(o, (tuple, list)) and _builtins.all(isinstance(e, int) for e in o):
            shapes.append(list(o))
        else:
            shapes.append(list(asarray(o).shape))
    eq = _einsum_equation(equation, tuple(len(s) for s in shapes))
    return _C._einsum_path(eq, shapes, strategy, None, budget_ms, seed, memory_limit,
                           search_work)


# ---- I/O (NumPy's formats) -------------------------------------------------------------


def save(file, x) -> None:
    """Writes a .npy file (NumPy's format; np.load reads it)."""
    _np.save(file, _np.asarray(asarray(x).detach()))


def load(file):
    """Reads a .npy file as a tensor, or a .npz archive as a dict of tensors."""
    data = _np.load(file)
    if isinstance(data, _np.lib.npyio.NpzFile):
        with data:
            return {k: from_numpy(_np.array(data[k])) for k in data.files}
    return from_numpy(data)


def savez(file, **tensors) -> None:
    _np.savez(file, **{k: _np.asarray(asarray(v).detach()) for k, v in tensors.items()})


# ---- Tensor methods written in Python ----------------------------------------------------


def _is_index_array(k) -> bool:
    return isinstance(k, (Tensor, _np.ndarray, list))


def _getitem(self: Tensor, key):
    if not isinstance(key, tuple):
        key = (key,)
    # Boolean masks: x[mask] with a mask over the leading axes.
    if len(key) == 1 and _is_index_array(key[0]):
        k = key[0]
        kt = asarray(k) if not isinstance(k, list) else asarray(_np.asarray(k))
        if kt.dtype == bool_:
            mask = _np.asarray(kt.detach())
            if mask.shape != tuple(self.shape[:mask.ndim]):
                raise errors.ShapeMismatch(
                    f"[index] boolean index of shape {mask.shape} does not match the indexed "
                    f"tensor's leading shape {tuple(self.shape[:mask.ndim])}")
            rest = tuple(self.shape[mask.ndim:])
            flat = self._reshape((-1,) + rest, "C")
            return flat._index_select(0, from_numpy(_np.flatnonzero(mask).astype(_np.int64)))
    n_specified = _builtins.sum(1 for k in key if k is not None and k is not Ellipsis and
                                not (isinstance(k, (Tensor, _np.ndarray)) and
                                     asarray(k).dtype == bool_))
    if _builtins.sum(1 for k in key if k is Ellipsis) > 1:
        raise errors.InvalidArgument("[index] an index can only have a single ellipsis ('...')")
    if n_specified > self.ndim:
        raise errors.AxisOutOfBounds(
            f"[index] too many indices: the tensor has dimension {self.ndim} but {n_specified} "
            "were indexed")
    out = self
    axis = 0
    arrays = []
    for k in key:
        if k is Ellipsis:
            axis += self.ndim - n_specified
            # axes consumed by `...` stay as they are
        elif k is None:
            out = out._unsqueeze(axis)
            axis += 1
        elif isinstance(k, slice):
            out = out._slice(axis, k.start, k.stop, 1 if k.step is None else k.step)
            axis += 1
        elif _is_index_array(k):
            arrays.append((axis, k))
            axis += 1
        else:
            out = out._select(axis, _operator.index(k))
    if not arrays:
        return out
    if len(arrays) == 1:
        a, k = arrays[0]
        return take(out, k if not isinstance(k, list) else _np.asarray(k, dtype=_np.int64), axis=a)
    # Several integer arrays on consecutive axes: one linear index.
    axes = [a for a, _ in arrays]
    if axes != list(range(axes[0], axes[0] + len(axes))):
        raise errors.Unsupported(
            "[index] integer arrays on non-adjacent axes are not supported; index one axis at "
            "a time")
    idx = _np.broadcast_arrays(*[_np.asarray(asarray(k).detach() if not isinstance(k, list)
                                            else _np.asarray(k), dtype=_np.int64)
                                 for _, k in arrays])
    dims = tuple(out.shape[a] for a in axes)
    idx = [_np.where(i < 0, i + d, i) for i, d in zip(idx, dims)]
    for i, d in zip(idx, dims):
        if i.size and (i.min() < 0 or i.max() >= d):
            raise errors.AxisOutOfBounds(f"[index] index out of bounds for axis of size {d}")
    lin = _np.ravel_multi_index(tuple(idx), dims)
    a0 = axes[0]
    shape = tuple(out.shape)
    merged = out._reshape(shape[:a0] + (-1,) + shape[a0 + len(axes):], "C")
    return take(merged, lin, axis=a0)


def _setitem(self: Tensor, key, value):
    if self.requires_grad:
        raise errors.RuntimeState(
            "[setitem] a tensor that requires grad cannot be written in place; build a new "
            "tensor instead (e.g. with where)")
    arr = self.numpy()
    arr[key] = _np.asarray(value.detach() if isinstance(value, Tensor) else value)


def _inplace(op):
    def f(self: Tensor, other):
        if self.requires_grad:
            raise errors.RuntimeState(
                "[in-place] a tensor that requires grad cannot be changed in place; write "
                "x = x + y (a new tensor) instead")
        result = op(self, other)
        if result.dtype != self.dtype:
            raise errors.DTypeMismatch(
                f"[in-place] the result has dtype {result.dtype.name}, which cannot be written "
                f"into a tensor of dtype {self.dtype.name}; use x = x op y")
        _np.copyto(self.numpy(), _np.asarray(result.broadcast_to(self.shape)))
        return self

    return f


def _repr(self: Tensor) -> str:
    body = _np.array2string(_np.asarray(self.detach()), separator=", ", prefix="tensor(")
    extras = []
    if self.dtype not in (float64, int64, bool_) or self.size == 0:
        extras.append(f"dtype=tenferro.{self.dtype.name}")
    if self.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _rebuild(array, requires_grad):
    t = from_numpy(array)
    if requires_grad:
        t.requires_grad_()
    return t


def _reduce(self: Tensor):
    """Pickling (and copy.deepcopy) through a NumPy copy of the value; the
    graph is not pickled, a leaf's requires_grad is."""
    return (_rebuild, (_np.array(self.detach()), self.requires_grad and self.is_leaf))


def _format(self: Tensor, spec: str) -> str:
    if self.ndim == 0 and spec:
        return format(self.item(), spec)
    return format(repr(self), spec)


def _tolist(self: Tensor):
    return _np.asarray(self.detach()).tolist()


def _method(fn):
    return lambda self, *args, **kwargs: fn(self, *args, **kwargs)


def _attach(cls, eager: bool) -> None:
    """The methods written in Python, on Tensor and TracedTensor alike."""
    cls.__getitem__ = _getitem
    cls.__matmul__ = lambda a, b: matmul(a, b)
    cls.__rmatmul__ = lambda a, b: matmul(b, a)
    cls.reshape = lambda self, *shape, order="C": reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, str)) else shape,
        order)
    cls.transpose = lambda self, *axes: transpose(
        self, None if not axes else (axes[0] if len(axes) == 1 and not isinstance(axes[0], int)
                                     else axes))
    cls.permute = lambda self, *axes: self._permute(
        list(axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes))
    cls.ravel = lambda self: reshape(self, (-1,))
    cls.astype = lambda self, dtype: astype(self, dtype)
    cls.conj = lambda self: conj(self)
    cls.conjugate = cls.conj
    for name in ("sum", "prod", "mean", "max", "min", "all", "any", "var", "std", "argmax",
                 "argmin", "logsumexp", "clip", "cumsum", "cumprod", "trace", "abs", "exp", "log",
                 "sqrt", "sin", "cos", "tanh", "sigmoid", "square"):
        setattr(cls, name, _method(globals()[name]))
    cls.dot = lambda self, other: dot(self, other)
    cls.swapaxes = lambda self, a, b: swapaxes(self, a, b)
    cls.expand_dims = lambda self, axis: expand_dims(self, axis)
    if not eager:
        return
    cls.__setitem__ = _setitem
    cls.__repr__ = _repr
    cls.__str__ = _repr
    cls.tolist = _tolist
    cls.__reduce__ = _reduce
    cls.__format__ = _format
    cls.__iadd__ = _inplace(_operator.add)
    cls.__isub__ = _inplace(_operator.sub)
    cls.__imul__ = _inplace(_operator.mul)
    cls.__itruediv__ = _inplace(_operator.truediv)
    cls.__ipow__ = _inplace(_operator.pow)
    cls.__array_priority__ = 1000  # ndarray + Tensor gives a Tensor
    cls.flatten = lambda self: reshape(self, (-1,)).copy()
    cls.clone = cls.copy


_attach(Tensor, eager=True)
_attach(TracedTensor, eager=False)


# ---- the traced tier ---------------------------------------------------------------------


class Spec:
    """The abstract input of a traced program: a shape whose entries are
    integers or names of sizes bound at run time (``("chi", 2, "chi")``),
    a dtype, and an optional name for messages."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=float64, name=None):
        self.shape = (shape,) if isinstance(shape, (int, str)) else tuple(shape)
        self.dtype = dtype
        self.name = name

    def __repr__(self) -> str:
        return f"Spec({self.shape}, {as_dtype(self.dtype).name})"


def jit(fn, *specs) -> Program:
    """Builds a program from ``fn``, a function of tensors, called once with
    traced values shaped like ``specs`` (Spec objects, or arrays/tensors whose
    shape and dtype are taken). The returned Program runs on tensors, binds
    its named sizes on every call, and transforms with grad/vjp/jvp/hvp::

        p = tenferro.jit(lambda a, m: tenferro.sum(a @ m), Spec(("n", "n")), Spec(("n", 3)))
        p(np.ones((4, 4)), np.ones((4, 3)))   # n = 4
        g = p.grad(wrt=0)

    Python control flow inside fn runs once, while tracing."""
    if not callable(fn):
        raise errors.InvalidArgument("[jit] the first argument must be the function to trace")
    norm = []
    for sp in specs:
        if isinstance(sp, Spec):
            norm.append(sp)
        else:
            t = asarray(sp)
            norm.append(Spec(t.shape, t.dtype))
    return _C._trace(fn, *norm)


# ---- control flow and fixed points ---------------------------------------------------------


def _any_traced(*values) -> bool:
    for v in values:
        if isinstance(v, TracedTensor):
            return True
        if isinstance(v, (tuple, list)) and _any_traced(*v):
            return True
    return False


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    Inside ``tenferro.jit`` with a traced predicate or operands this is one
    node of the program: both branches are traced once, must return the same
    dtypes and shapes, and only the branch taken runs (forward and reverse
    mode go through it). Outside a trace it is a Python ``if``."""
    if _any_traced(pred, *operands):
        return _C._cond(pred, true_fn, false_fn, *operands)
    return true_fn(*operands) if bool(asarray(pred).item()) else false_fn(*operands)


def while_loop(cond_fn, body_fn, init_val, max_iterations=None):
    """``val = init_val; while cond_fn(val): val = body_fn(val)``; returns val.

    ``val`` is a tensor or a tuple of tensors whose dtypes and shapes the
    body keeps. Inside ``tenferro.jit`` (traced ``init_val``) it is one node
    that keeps one set of carries, differentiable in forward mode; reverse
    mode is refused (use fixed_point or scan). ``max_iterations`` caps it
    (NoConvergence beyond)."""
    limit = -1 if max_iterations is None else int(max_iterations)
    if _any_traced(init_val):
        return _C._while_loop(cond_fn, body_fn, init_val, limit)
    val, steps = init_val, 0
    while bool(asarray(cond_fn(val)).item()):
        if 0 <= limit <= steps:
            raise errors.NoConvergence(
                f"[while_loop] the predicate still holds after {limit} iterations "
                "(max_iterations); raise the limit or check the predicate")
        val = body_fn(val)
        steps += 1
    return val


def scan(f, init, xs=None, length=None, reverse=False, checkpoint_every=0):
    """``carry = init; for x in xs: carry, y = f(carry, x)``; returns
    ``(carry, ys)`` with the ``y``s stacked along a new axis 0 (as
    ``jax.lax.scan``). ``xs`` is a tensor or a tuple of tensors scanned along
    axis 0 (``None`` with ``length`` steps); ``y`` may be None, a tensor or a
    tuple. Inside ``tenferro.jit`` it is one node with jvp and vjp (a reverse
    scan over stored carries; ``checkpoint_every=k`` stores every k-th carry
    and recomputes the rest). Outside a trace it is a Python loop."""
    if _any_traced(init, xs):
        return _C._scan(f, init, xs, -1 if length is None else int(length), bool(reverse),
                        int(checkpoint_every))
    if xs is None:
        if length is None:
            raise errors.InvalidArgument("[scan] without xs, give length")
        steps, slices = int(length), None
    else:
        seq = xs if isinstance(xs, (tuple, list)) else (xs,)
        seq = tuple(asarray(x) for x in seq)
        steps = seq[0].shape[0]
        slices = seq
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    carry, ys = init, [None] * steps
    for i in order:
        x = None if slices is None else (tuple(s[i] for s in slices) if isinstance(xs, (tuple, list))
                                         else slices[0][i])
        carry, ys[i] = f(carry, x)
    if steps == 0 or ys[0] is None:
        return carry, None
    if isinstance(ys[0], (tuple, list)):
        return carry, tuple(stack([y[k] for y in ys]) for k in range(len(ys[0])))
    return carry, stack(ys)


def fixed_point(f, x0, *params, tol=1e-10, max_iter=1000, throw_on_failure=True,
                linear_tol=None, linear_max_iter=None, linear_solver="auto", full_output=False):
    """Solves ``x = f(x, *params)`` by iterating from ``x0`` until
    ``max|f(x) - x| <= tol * max(1, max|x|)``.

    ``x0`` is a tensor or a tuple of tensors (then ``f`` takes and returns a
    tuple). Derivatives with respect to ``params`` are implicit (the
    implicit function theorem): backward, grad, jvp and higher orders work
    without storing the iterations, eagerly and inside ``tenferro.jit``.
    Not converged after ``max_iter``: NoConvergence, or with
    ``throw_on_failure=False`` the last iterate. The derivatives' linear
    systems are iterated (``linear_solver="iterate"``), solved directly
    (``"direct"``), or ``"auto"``: directly for small states (docs/control_flow.md).
    ``full_output=True`` returns ``(x, iterations, residual, converged)``."""
    return _C._fixed_point(f, x0, *params, tol=tol, max_iter=max_iter,
                           throw_on_failure=throw_on_failure, linear_tol=linear_tol,
                           linear_max_iter=linear_max_iter, linear_solver=linear_solver,
                           full_output=full_output)


# ---- compiled family libraries -----------------------------------------------------------


class FamilyLibrary:
    """The families of a compiled family library, as attributes."""

    def __init__(self, path: str, entries: dict):
        self.path = path
        self._entries = entries
        for name, fn in entries.items():
            setattr(self, name, fn)

    def __dir__(self):
        return list(self._entries) + ["path"]

    def __repr__(self) -> str:
        return f"FamilyLibrary({self.path!r}: {', '.join(self._entries)})"


def load_library(path) -> FamilyLibrary:
    """Loads a shared library of C++ extension families
    (tenferro/runtime/family_library.hpp, TENFERRO_FAMILY_LIBRARY) and returns
    its families as functions: ``lib = tenferro.load_library(p);
    lib.softsquare(x)``. They install themselves on first use and carry their
    AD rules, like the Python families. Their tensors follow the C++ tier's
    axis order (a Python (m, k) array is a C++ [k, m] tensor)."""
    import os
    p = os.fspath(path)
    return FamilyLibrary(p, _C._load_library(os.path.abspath(p)))


# ---- linalg and fft additions written in Python --------------------------------------------


def _norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: the 2-norm of the flattened tensor by default, a
    vector norm over one axis, a matrix norm over two."""
    x = asarray(x)
    if axis is None:
        if ord is None:
            return linalg.vector_norm(x, 2.0, None, keepdims)
        if x.ndim == 1:
            return linalg.vector_norm(x, float(ord), None, keepdims)
        if x.ndim == 2:
            return linalg.matrix_norm(x, ord, (0, 1), keepdims)
        raise errors.InvalidArgument("[norm] give axis for ord with a tensor of dimension > 2")
    if isinstance(axis, int) or len(axis) == 1:
        a = axis if isinstance(axis, int) else axis[0]
        return linalg.vector_norm(x, 2.0 if ord is None else float(ord), a, keepdims)
    return linalg.matrix_norm(x, "fro" if ord is None else ord, tuple(axis), keepdims)


linalg.norm = _norm

# The compiled submodules import as tenferro.linalg, tenferro.fft and
# tenferro.autograd too.
import sys as _sys  # noqa: E402

for _sub in (linalg, fft, autograd):
    _sys.modules[__name__ + "." + _sub.__name__.rsplit(".", 1)[-1]] = _sub
del _sub
from . import optim  # noqa: E402
