"""Optimisers with torch.optim's interface: SGD, Adam, AdamW and LBFGS.

They are tenferro's C++ optimisers (``tenferro::optim``, docs/optim.md),
which follow torch.optim's update rules, defaults and stopping rules. A step
binds each parameter's new value to the same tensor (the Python object keeps
its identity, stays a leaf that requires grad, and graphs recorded before the
step keep the value they saw)::

    w = tenferro.zeros((3,)).requires_grad_()
    opt = tenferro.optim.Adam([w], lr=1e-2)
    for _ in range(100):
        opt.zero_grad()
        loss = ((w - target) * (w - target)).sum()
        loss.backward()
        opt.step()

L-BFGS takes torch's closure, which clears the grads, computes the loss,
calls ``backward()`` and returns the loss::

    opt = tenferro.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = f(w)
        loss.backward()
        return loss

    opt.step(closure)

Parameters are leaf tensors that require grad (``tenferro.tensor(data,
requires_grad=True)`` or ``x.requires_grad_()``), of dtype float32, float64,
complex64 or complex128 (complex ones are optimised in their real
components, as torch does). ``params`` is an iterable of tensors, or of dicts
(parameter groups) with a ``"params"`` entry and per-group options;
``param_groups[i]["lr"]`` (and the other options) may be changed between
steps, as in torch.

Differences from torch.optim (1.13):

- The optimiser state is kept in double precision, so float32 parameters
  are updated in double and rounded (torch computes in float32); float64
  trajectories agree with torch's to rounding.
- ``zero_grad()`` always sets the grads to None (torch >= 2.0's default);
  ``set_to_none=False`` is refused, since tenferro has no zero-filled grads.
- ``step()`` runs the closure with recording as it is: inside
  ``tenferro.no_grad()`` it records nothing (torch turns grad mode back on).
- There is no ``state_dict()``; ``SGD``'s ``lr`` defaults to 1e-3 (torch
  1.13 requires it).
- Errors are tenferro.errors classes: bad option values are
  ``InvalidArgument`` (a ``ValueError``), parameters that do not require grad
  or have history ``RuntimeState`` (a ``RuntimeError``).
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from . import errors
from ._tenferro import Tensor
from ._tenferro import optim as _core

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "LBFGS"]


class Optimizer:
    """Parameter groups, ``zero_grad`` and options that may change between
    steps; the subclasses hold the C++ optimisers that do the steps.

    ``param_groups`` is a list of dicts, one per group: ``"params"`` (the
    tensors) and the options. Changing an option in a group takes effect at
    the next ``step()`` (validated then, as the constructor does).
    """

    _op = "optim"
    # Options fixed at construction (the C++ state depends on them).
    _fixed: tuple = ()

    def __init__(self, params, defaults: dict):
        if isinstance(params, (Tensor, dict)):
            raise errors.InvalidArgument(
                f"[{self._op}] params must be an iterable of Tensors or of dicts (parameter "
                f"groups), got a single {type(params).__name__}; pass [x]")
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        self._cores: list[list] = []  # per group: its C++ optimisers
        self._applied: list[dict] = []  # per group: the options its C++ optimisers hold
        self._identities: set = set()
        groups = list(params)
        if not groups:
            raise errors.InvalidArgument(f"[{self._op}] got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # ---- groups ----------------------------------------------------------------------

    def add_param_group(self, param_group: dict) -> None:
        """Adds a group of parameters with its own options (the defaults fill
        the options it does not name)."""
        if not isinstance(param_group, dict):
            raise errors.InvalidArgument(
                f"[{self._op}] a parameter group must be a dict with a 'params' entry, got "
                f"{type(param_group).__name__}")
        group = dict(param_group)
        if "params" not in group:
            raise errors.InvalidArgument(f"[{self._op}] a parameter group needs a 'params' entry")
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        if not params:
            raise errors.InvalidArgument(f"[{self._op}] got an empty parameter list")
        unknown = set(group) - set(self.defaults) - {"params"}
        if unknown:
            raise errors.InvalidArgument(
                f"[{self._op}] unknown option(s) {sorted(unknown)}; the options are "
                f"{sorted(self.defaults)}")
        identities = []
        for i, p in enumerate(params):
            _check_parameter(self._op, p, i)
            identity = _core._identity(p)
            if identity in self._identities or identity in identities:
                raise errors.InvalidArgument(
                    f"[{self._op}] parameter {i} appears more than once (in this group or "
                    "another one)")
            identities.append(identity)
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        group["params"] = params
        cores = self._make_cores(params, group)  # validates the options
        self.param_groups.append(group)
        self._cores.append(cores)
        self._applied.append(self._options(group))
        self._identities.update(identities)

    def _options(self, group: dict) -> dict:
        options = {k: v for k, v in group.items() if k != "params"}
        options["params"] = [_core._identity(p) for p in group["params"]]
        return options

    def _sync(self) -> None:
        """Hands options changed in param_groups to the C++ optimisers."""
        for index, group in enumerate(self.param_groups):
            applied = self._applied[index]
            current = self._options(group)
            if current == applied:
                continue
            changed = {k: v for k, v in current.items() if applied.get(k, _MISSING) != v}
            if "params" in changed:
                raise errors.InvalidArgument(
                    f"[{self._op}] the parameters of group {index} changed; add new parameters "
                    "with add_param_group")
            unknown = set(changed) - set(self.defaults)
            if unknown:
                raise errors.InvalidArgument(
                    f"[{self._op}] unknown option(s) {sorted(unknown)} in group {index}")
            fixed = [k for k in changed if k in self._fixed]
            if fixed:
                raise errors.InvalidArgument(
                    f"[{self._op}] {fixed[0]} cannot be changed after construction (make a new "
                    "optimiser)")
            for core in self._cores[index]:
                self._configure(core, changed)
            self._applied[index] = current

    # ---- steps ---------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears every parameter's gradient (``.grad`` becomes None)."""
        if not set_to_none:
            raise errors.Unsupported(
                f"[{self._op}] zero_grad(set_to_none=False) is not supported: tenferro clears "
                "grads to None (a parameter without a grad is left unchanged by step())")
        for cores in self._cores:
            for core in cores:
                core.zero_grad()

    def step(self, closure: Optional[Callable] = None):
        """One update of every parameter that has a gradient. ``closure``,
        when given, is called first (it should clear the grads, compute the
        loss, call backward() and return the loss); its result is returned."""
        loss = None
        if closure is not None:
            loss = closure()
        self._sync()
        for cores in self._cores:
            for core in cores:
                # One C++ optimiser per parameter, stepped only when the
                # parameter has a gradient: torch counts Adam's bias-correction
                # steps per parameter, and skips parameters without a grad.
                if core.has_grad:
                    core.step()
        return loss

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    # Subclasses: the C++ optimisers of a group, and how options reach them.
    def _make_cores(self, params: list, group: dict) -> list:
        raise NotImplementedError

    def _configure(self, core, changed: dict) -> None:
        core.configure(**changed)


_MISSING = object()


def _check_parameter(op: str, p, i: int) -> None:
    if not isinstance(p, Tensor):
        raise errors.InvalidArgument(
            f"[{op}] parameter {i} is a {type(p).__name__}, not a tenferro.Tensor; optimisers "
            "update tensors made with tenferro.tensor(data, requires_grad=True)")
    if not p.requires_grad:
        raise errors.RuntimeState(
            f"[{op}] parameter {i} (shape {tuple(p.shape)}, {p.dtype}) does not require grad, "
            "so it would never get a gradient; make it with tenferro.tensor(data, "
            "requires_grad=True) or call x.requires_grad_() before creating the optimiser")
    if not p.is_leaf:
        raise errors.RuntimeState(
            f"[{op}] parameter {i} (shape {tuple(p.shape)}) is not a leaf: it was computed from "
            "other tensors and cannot be updated; optimise the leaf it came from, or a copy "
            "made with x.detach().copy().requires_grad_()")


def _betas(op: str, betas) -> tuple:
    try:
        b1, b2 = betas
    except (TypeError, ValueError):
        raise errors.InvalidArgument(
            f"[{op}] betas must be a pair (beta1, beta2), got {betas!r}") from None
    return float(b1), float(b2)


class SGD(Optimizer):
    """Stochastic gradient descent with torch.optim.SGD's rule.

    ``g = grad + weight_decay * p``; with momentum,
    ``b = momentum * b + (1 - dampening) * g`` (``b = g`` at the first step) and
    ``g = b``, or ``g + momentum * b`` with ``nesterov``; then
    ``p -= lr * g`` (``+=`` with ``maximize``).

    Args:
        params: tensors, or dicts of parameter groups.
        lr: learning rate (>= 0).
        momentum: momentum factor (>= 0).
        dampening: dampening of the momentum.
        weight_decay: L2 penalty (>= 0).
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend instead of descend.
    """

    _op = "optim.sgd"

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, maximize: bool = False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _make_cores(self, params, group):
        options = {k: group[k] for k in self.defaults}
        return [_core.Sgd([p], **options) for p in params]


class Adam(Optimizer):
    """Adam with torch.optim.Adam's rule.

    Per real component: ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``,
    ``p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps)``, with
    ``g = grad + weight_decay * p`` and ``t`` the parameter's own step count.

    Args:
        params: tensors, or dicts of parameter groups.
        lr: learning rate (>= 0).
        betas: the moments' decay rates, each in [0, 1).
        eps: added to the denominator (>= 0).
        weight_decay: L2 penalty (>= 0), added to the gradient.
        amsgrad: use the running maximum of the second moment (fixed at
            construction).
        maximize: ascend instead of descend.
    """

    _op = "optim.adam"
    _fixed = ("amsgrad",)
    _decoupled = False

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _make_cores(self, params, group):
        beta1, beta2 = _betas(self._op, group["betas"])
        options = dict(lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"],
                       weight_decay=group["weight_decay"], amsgrad=group["amsgrad"],
                       maximize=group["maximize"])
        if self._decoupled:
            return [_core.AdamW([p], **options) for p in params]
        return [_core.Adam([p], **options) for p in params]

    def _configure(self, core, changed):
        changed = dict(changed)
        if "betas" in changed:
            changed["beta1"], changed["beta2"] = _betas(self._op, changed.pop("betas"))
        core.configure(**changed)


class AdamW(Adam):
    """AdamW with torch.optim.AdamW's rule: Adam with decoupled weight decay,
    ``p *= 1 - lr * weight_decay`` before the Adam step (default 1e-2).

    Args: as :class:`Adam`.
    """

    _op = "optim.adamw"
    _decoupled = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize)


class LBFGS(Optimizer):
    """Limited-memory BFGS with torch.optim.LBFGS's algorithm, stopping rules
    and closure protocol.

    All parameters are optimised as one real vector (one parameter group).
    ``step(closure)`` runs up to ``max_iter`` iterations; the closure clears
    the grads, computes the loss, calls ``backward()`` and returns the loss
    (a scalar tensor or a float). The curvature history persists across
    ``step()`` calls.

    Args:
        params: tensors (one group).
        lr: step length (> 0); the first iteration's is
            ``min(1, 1 / sum|g|) * lr``.
        max_iter: iterations per step() (>= 1).
        max_eval: closure calls per step() (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when ``max |g| <= tolerance_grad``.
        tolerance_change: stop when the step or the loss change falls below.
        history_size: curvature pairs kept (>= 1, fixed at construction).
        line_search_fn: None (fixed steps of length lr) or "strong_wolfe".
    """

    _op = "optim.lbfgs"
    _fixed = ("history_size",)

    def __init__(self, params: Iterable, lr: float = 1.0, max_iter: int = 20,
                 max_eval: Optional[int] = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: Optional[str] = None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))

    def add_param_group(self, param_group: dict) -> None:
        if self.param_groups:
            raise errors.InvalidArgument(
                "[optim.lbfgs] LBFGS doesn't support per-parameter options (parameter groups): "
                "it optimises all parameters as one vector")
        super().add_param_group(param_group)

    def _make_cores(self, params, group):
        options = {k: group[k] for k in self.defaults}
        return [_core.Lbfgs(params, **options)]

    def _configure(self, core, changed):
        changed = dict(changed)
        if "line_search_fn" in changed and changed["line_search_fn"] is None:
            changed["line_search_fn"] = "none"
        core.configure(**changed)

    @property
    def iterations(self) -> int:
        """L-BFGS iterations over every step() so far."""
        return self._cores[0][0].iterations

    @property
    def evaluations(self) -> int:
        """Closure calls over every step() so far."""
        return self._cores[0][0].evaluations

    def step(self, closure: Callable):  # type: ignore[override]
        """Runs up to max_iter iterations, calling ``closure`` to re-evaluate
        the loss and its gradient; returns what the first call returned."""
        if closure is None or not callable(closure):
            raise errors.InvalidArgument(
                "[optim.lbfgs] step() needs a closure that clears the grads, computes the loss, "
                "calls loss.backward() and returns the loss")
        self._sync()
        return self._cores[0][0].step(closure)
