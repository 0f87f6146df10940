"""tenferro.optim against torch.optim (1.13): the same problems from the same
start, parameter trajectories and L-BFGS loss sequences compared step by
step; option changes through param_groups; typed errors."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import errors

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(8, 3))
Y = RNG.normal(size=(8, 2))
TARGET = RNG.normal(size=3) + 1j * RNG.normal(size=3)


class Lib:
    """What a problem needs of tenferro or torch."""

    def __init__(self, name):
        self.name = name
        self.xp = tf if name == "tf" else torch
        self.optim = tf.optim if name == "tf" else torch.optim

    def const(self, a, like=None):
        """A constant; of like's dtype when given."""
        if self.name == "tf":
            return tf.tensor(a, dtype=None if like is None else like.dtype)
        return torch.tensor(a, dtype=None if like is None else like.dtype)

    def param(self, a, dtype=None):
        if self.name == "tf":
            return tf.tensor(a if dtype is None else a.astype(dtype), requires_grad=True)
        t = torch.tensor(a if dtype is None else a.astype(dtype))
        return t.requires_grad_()

    @staticmethod
    def value(p):
        return np.array(p.detach().numpy(), copy=True)


TF, TORCH = Lib("tf"), Lib("torch")


# ---- problems: a loss over several parameters of different shapes ----------------------


def least_squares(lib, params):
    w, b, c = params  # (3, 2), (2,), ()
    r = lib.const(X, like=w) @ w + b + c - lib.const(Y, like=w)
    return (r * r).sum() / 8 + 0.5 * c * c


LEAST_SQUARES_START = [RNG.normal(size=(3, 2)), RNG.normal(size=2), np.array(0.7)]


def rosen(z):
    d = z[1:] - z[:-1] * z[:-1]
    e = 1 - z[:-1]
    return (100 * d * d + e * e).sum()


def rosenbrock(lib, params):
    a, b = params  # (3,), (2, 2); minimum 0 at all ones
    t = b[0, 0] - a[2] * a[2]
    return rosen(a) + rosen(b.reshape(-1)) + 100 * t * t


# From here L-BFGS (tenferro's and torch's alike) ends in the local minimum
# near a = (-0.99, 0.99, 0.99) (loss 3.98); from the second start it reaches
# the global one.
ROSENBROCK_START = [np.array([-1.2, 1.0, 0.8]), np.array([[0.9, 1.2], [0.5, -0.3]])]
ROSENBROCK_VALLEY_START = [np.array([0.2, 0.5, 0.8]), ROSENBROCK_START[1]]


def complex_fit(lib, params):
    z, w = params  # complex (3,), real (2,)
    d = lib.xp.abs(z - lib.const(TARGET))
    return (d * d * d).sum() + ((w - 0.5) * (w - 0.5) * (w + 2)).sum()


COMPLEX_START = [np.array([0.3 + 0.2j, -1.0 + 0.5j, 0.0 - 1.0j]), np.array([0.2, 1.1])]

PROBLEMS = {
    "least_squares": (least_squares, LEAST_SQUARES_START),
    "rosenbrock": (rosenbrock, ROSENBROCK_START),
    "rosenbrock_valley": (rosenbrock, ROSENBROCK_VALLEY_START),
    "complex": (complex_fit, COMPLEX_START),
}


def first_order_run(lib, name, kwargs, problem, steps, dtype=None, lr_schedule=None):
    loss_fn, start = PROBLEMS[problem]
    params = [lib.param(v, dtype) for v in start]
    opt = getattr(lib.optim, name)(params, **kwargs)
    trajectory = []
    for k in range(steps):
        if lr_schedule:
            for group in opt.param_groups:
                group["lr"] = lr_schedule(k)
        opt.zero_grad()
        loss_fn(lib, params).backward()
        opt.step()
        trajectory.append([lib.value(p) for p in params])
    return trajectory


def assert_trajectories_agree(a, b, rtol=1e-10, atol=1e-12):
    assert len(a) == len(b)
    for step, (pa, pb) in enumerate(zip(a, b)):
        for i, (x, y) in enumerate(zip(pa, pb)):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol,
                                       err_msg=f"step {step}, parameter {i}")


SGD_CASES = [
    ("least_squares", dict(lr=0.05)),
    ("least_squares", dict(lr=0.05, momentum=0.9)),
    ("least_squares", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1)),
    ("least_squares", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("rosenbrock", dict(lr=1e-4, momentum=0.5)),
    ("complex", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=0.01)),
]


@pytest.mark.parametrize("problem,kwargs", SGD_CASES)
def test_sgd_trajectory_matches_torch(problem, kwargs):
    ours = first_order_run(TF, "SGD", kwargs, problem, 60)
    ref = first_order_run(TORCH, "SGD", kwargs, problem, 60)
    assert_trajectories_agree(ours, ref)


def test_sgd_maximize_matches_torch():
    def run(lib):
        params = [lib.param(v) for v in LEAST_SQUARES_START]
        opt = lib.optim.SGD(params, lr=0.05, momentum=0.5, maximize=True)
        out = []
        for _ in range(30):
            opt.zero_grad()
            (-least_squares(lib, params)).backward()
            opt.step()
            out.append([lib.value(p) for p in params])
        return out

    assert_trajectories_agree(run(TF), run(TORCH))


ADAM_CASES = [
    ("least_squares", dict(lr=0.05)),
    ("least_squares", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("least_squares", dict(lr=0.05, amsgrad=True)),
    ("rosenbrock", dict(lr=0.02)),
    ("rosenbrock", dict(lr=0.02, amsgrad=True, weight_decay=0.01)),
    ("complex", dict(lr=0.03, weight_decay=0.05)),
]


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("problem,kwargs", ADAM_CASES)
def test_adam_trajectory_matches_torch(name, problem, kwargs):
    ours = first_order_run(TF, name, kwargs, problem, 60)
    ref = first_order_run(TORCH, name, kwargs, problem, 60)
    assert_trajectories_agree(ours, ref)


def test_adamw_default_weight_decay_is_torchs():
    assert tf.optim.AdamW([tf.tensor([1.0], requires_grad=True)]).defaults["weight_decay"] == 0.01
    ours = first_order_run(TF, "AdamW", dict(lr=0.05), "least_squares", 40)
    ref = first_order_run(TORCH, "AdamW", dict(lr=0.05), "least_squares", 40)
    assert_trajectories_agree(ours, ref)


def test_adam_float32_close_to_torch():
    # tenferro keeps the state in double and rounds the update (torch computes
    # in float32), so float32 trajectories agree to float32 rounding only.
    ours = first_order_run(TF, "Adam", dict(lr=0.05), "least_squares", 30, dtype=np.float32)
    ref = first_order_run(TORCH, "Adam", dict(lr=0.05), "least_squares", 30, dtype=np.float32)
    assert ours[-1][0].dtype == np.float32
    assert_trajectories_agree(ours, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.05, momentum=0.9)),
                                         ("Adam", dict(lr=0.05)),
                                         ("AdamW", dict(lr=0.05, amsgrad=True))])
def test_lr_schedule_through_param_groups_matches_torch(name, kwargs):
    def schedule(k):
        return 0.05 * 0.9 ** k

    ours = first_order_run(TF, name, kwargs, "least_squares", 40, lr_schedule=schedule)
    ref = first_order_run(TORCH, name, kwargs, "least_squares", 40, lr_schedule=schedule)
    assert_trajectories_agree(ours, ref)


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_param_groups_with_own_options_match_torch(name):
    def run(lib):
        w, b, c = [lib.param(v) for v in LEAST_SQUARES_START]
        extra = dict(momentum=0.9) if name == "SGD" else dict(betas=(0.5, 0.9))
        opt = getattr(lib.optim, name)([{"params": [w]}, {"params": [b, c], "lr": 0.01, **extra}],
                                       lr=0.05)
        out = []
        for k in range(30):
            if k == 10:
                opt.param_groups[0]["weight_decay"] = 0.2
            opt.zero_grad()
            least_squares(lib, [w, b, c]).backward()
            opt.step()
            out.append([lib.value(p) for p in (w, b, c)])
        return opt, out

    opt, ours = run(TF)
    _, ref = run(TORCH)
    assert_trajectories_agree(ours, ref)
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["lr"] == 0.01
    assert opt.param_groups[0]["weight_decay"] == 0.2


def test_adam_counts_steps_per_parameter_as_torch():
    # c only gets a gradient every third step: torch's bias correction uses
    # the parameter's own step count, and a parameter without a grad is not
    # updated (not even by weight decay).
    def run(lib):
        w, b, c = [lib.param(v) for v in LEAST_SQUARES_START]
        opt = lib.optim.Adam([w, b, c], lr=0.05, weight_decay=0.1)
        out = []
        for k in range(20):
            opt.zero_grad(set_to_none=True)
            r = lib.const(X) @ w + b - lib.const(Y)
            loss = (r * r).sum()
            if k % 3 == 0:
                loss = loss + (c - 2) * (c - 2)
            loss.backward()
            opt.step()
            out.append([lib.value(p) for p in (w, b, c)])
        return out

    assert_trajectories_agree(run(TF), run(TORCH))


def test_step_keeps_parameter_identity_and_returns_closure_loss():
    w = tf.tensor([1.0, -2.0], requires_grad=True)
    opt = tf.optim.SGD([w], lr=0.25)
    recorded = (w * w).sum()

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0
    np.testing.assert_array_equal(w.detach().numpy(), [0.5, -1.0])
    assert w.requires_grad and w.is_leaf and opt.param_groups[0]["params"][0] is w
    # A graph recorded before the step keeps the value it saw.
    opt.zero_grad()
    recorded.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, -4.0])


# ---- L-BFGS ------------------------------------------------------------------------------


def lbfgs_run(lib, kwargs, problem, steps):
    loss_fn, start = PROBLEMS[problem]
    params = [lib.param(v) for v in start]
    opt = lib.optim.LBFGS(params, **kwargs)
    losses = []

    def closure():
        opt.zero_grad()
        loss = loss_fn(lib, params)
        loss.backward()
        losses.append(float(loss))
        return loss

    returned = [float(opt.step(closure)) for _ in range(steps)]
    return np.array(losses), [lib.value(p) for p in params], returned


LBFGS_CASES = [
    ("least_squares", dict()),
    ("least_squares", dict(lr=0.5, history_size=3, max_iter=7)),
    ("least_squares", dict(line_search_fn="strong_wolfe", history_size=4)),
    ("rosenbrock", dict(line_search_fn="strong_wolfe")),
    ("rosenbrock", dict(line_search_fn="strong_wolfe", history_size=5, max_iter=15)),
    ("rosenbrock", dict(lr=0.1, max_iter=30)),
    ("rosenbrock_valley", dict(lr=0.2, max_iter=60, tolerance_change=0.0)),
    ("rosenbrock_valley", dict(line_search_fn="strong_wolfe", max_iter=30, tolerance_change=0.0)),
]


@pytest.mark.parametrize("problem,kwargs", LBFGS_CASES)
def test_lbfgs_matches_torch(problem, kwargs):
    losses, final, returned = lbfgs_run(TF, kwargs, problem, 4)
    ref_losses, ref_final, ref_returned = lbfgs_run(TORCH, kwargs, problem, 4)
    # The same closure calls (iterations, line-search trials and stopping
    # decisions), the same losses along the way and the same end point.
    assert len(losses) == len(ref_losses)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(returned, ref_returned, rtol=1e-9, atol=1e-13)
    for x, y in zip(final, ref_final):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_reaches_the_rosenbrock_minimum(line_search_fn):
    # tolerance_change=0: the default (1e-9) stops on the loss change while
    # the point is still 1e-5 to 1e-4 off along the valley's flat direction.
    lr = 1.0 if line_search_fn else 0.2
    losses, final, _ = lbfgs_run(TF, dict(lr=lr, max_iter=300, line_search_fn=line_search_fn,
                                          tolerance_grad=1e-14, tolerance_change=0.0),
                                 "rosenbrock_valley", 1)
    assert losses[-1] < 1e-20
    for x in final:
        np.testing.assert_allclose(x, np.ones_like(x), rtol=0, atol=1e-8)


def test_lbfgs_protocol_details():
    w = tf.tensor([3.0, -1.0], requires_grad=True)
    opt = tf.optim.LBFGS([w], line_search_fn="strong_wolfe")
    returned = []

    def closure():
        opt.zero_grad()
        loss = ((w - 1) * (w - 1)).sum()
        loss.backward()
        returned.append(loss)
        return loss

    first = opt.step(closure)
    assert first is returned[0]  # torch returns the first closure result
    assert opt.evaluations == len(returned) and opt.iterations >= 1
    np.testing.assert_allclose(w.detach().numpy(), [1.0, 1.0], atol=1e-12)

    # A closure may return a Python float.
    v = tf.tensor([2.0], requires_grad=True)
    opt2 = tf.optim.LBFGS([v])

    def float_closure():
        opt2.zero_grad()
        loss = (v * v).sum()
        loss.backward()
        return loss.item()

    assert opt2.step(float_closure) == 4.0
    assert abs(v.item()) < 1e-12


def test_lbfgs_complex_parameter_converges():
    # L-BFGS sees a complex parameter as its real components.
    z = tf.tensor(np.zeros(3, dtype=complex), requires_grad=True)
    w = tf.tensor(np.array([0.3, -0.2], dtype=np.float32), requires_grad=True)
    opt = tf.optim.LBFGS([z, w], line_search_fn="strong_wolfe", max_iter=50)

    def closure():
        opt.zero_grad()
        d = tf.abs(z - tf.tensor(TARGET))
        loss = (d * d).sum() + ((w - 2) * (w - 2)).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(z.detach().numpy(), TARGET, atol=1e-10)
    np.testing.assert_allclose(w.detach().numpy(), [2.0, 2.0], atol=1e-6)
    assert z.dtype == tf.complex128 and w.dtype == tf.float32


def test_lbfgs_lr_and_line_search_can_change_between_steps():
    def run(lib):
        params = [lib.param(v) for v in ROSENBROCK_START]
        opt = lib.optim.LBFGS(params, lr=0.1, max_iter=5)
        losses = []

        def closure():
            opt.zero_grad()
            loss = rosenbrock(lib, params)
            loss.backward()
            losses.append(float(loss))
            return loss

        opt.step(closure)
        opt.param_groups[0]["lr"] = 0.3
        opt.step(closure)
        opt.param_groups[0]["line_search_fn"] = "strong_wolfe"
        opt.param_groups[0]["lr"] = 1.0
        opt.step(closure)
        return np.array(losses)

    ours, ref = run(TF), run(TORCH)
    assert len(ours) == len(ref)
    np.testing.assert_allclose(ours, ref, rtol=1e-9)


def test_lbfgs_closure_errors():
    w = tf.tensor([1.0, 2.0], requires_grad=True)
    opt = tf.optim.LBFGS([w])

    def no_backward():
        opt.zero_grad()
        return (w * w).sum()

    with pytest.raises(errors.RuntimeState, match="backward"):
        opt.step(no_backward)

    def raises():
        raise KeyError("from the closure")

    with pytest.raises(KeyError, match="from the closure"):
        opt.step(raises)

    def vector_loss():
        opt.zero_grad()
        loss = w * w
        loss.sum().backward()
        return loss

    with pytest.raises(errors.InvalidArgument, match="scalar"):
        opt.step(vector_loss)

    def returns_text():
        return "loss"

    with pytest.raises(errors.InvalidArgument, match="str"):
        opt.step(returns_text)
    with pytest.raises(errors.InvalidArgument, match="closure"):
        opt.step(None)

    # Still usable after the failures.
    def good():
        opt.zero_grad()
        loss = ((w - 3) * (w - 3)).sum()
        loss.backward()
        return loss

    opt.step(good)
    np.testing.assert_allclose(w.detach().numpy(), [3.0, 3.0], atol=1e-9)


# ---- zero_grad and bad inputs ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "LBFGS"])
def test_zero_grad_clears_grads(name):
    a = tf.tensor([1.0, 2.0], requires_grad=True)
    b = tf.tensor([[3.0]], requires_grad=True)
    opt = getattr(tf.optim, name)([a, b])
    (a.sum() * b.sum()).backward()
    assert a.grad is not None and b.grad is not None
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    with pytest.raises(errors.Unsupported, match="set_to_none"):
        opt.zero_grad(set_to_none=False)


def test_a_parameter_without_grad_is_left_unchanged():
    a = tf.tensor([1.0, 2.0], requires_grad=True)
    b = tf.tensor([5.0], requires_grad=True)
    opt = tf.optim.SGD([a, b], lr=0.5, momentum=0.9, weight_decay=0.1)
    (a * a).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), [5.0])
    assert not np.allclose(a.detach().numpy(), [1.0, 2.0])


@pytest.mark.parametrize("make", [
    lambda p: tf.optim.SGD(p, lr=-0.1),
    lambda p: tf.optim.SGD(p, momentum=-1.0),
    lambda p: tf.optim.SGD(p, lr=0.1, nesterov=True),
    lambda p: tf.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.5, nesterov=True),
    lambda p: tf.optim.SGD(p, weight_decay=float("nan")),
    lambda p: tf.optim.Adam(p, lr=-1e-3),
    lambda p: tf.optim.Adam(p, betas=(1.0, 0.999)),
    lambda p: tf.optim.Adam(p, betas=(0.9, -0.1)),
    lambda p: tf.optim.Adam(p, betas=0.9),
    lambda p: tf.optim.Adam(p, eps=-1.0),
    lambda p: tf.optim.AdamW(p, weight_decay=-0.01),
    lambda p: tf.optim.LBFGS(p, lr=0.0),
    lambda p: tf.optim.LBFGS(p, max_iter=0),
    lambda p: tf.optim.LBFGS(p, history_size=0),
    lambda p: tf.optim.LBFGS(p, tolerance_grad=-1.0),
    lambda p: tf.optim.LBFGS(p, line_search_fn="backtracking"),
])
def test_bad_options_raise_invalid_argument(make):
    p = [tf.tensor([1.0, 2.0], requires_grad=True)]
    with pytest.raises(errors.InvalidArgument) as info:
        make(p)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith("[optim")


def test_bad_option_set_through_param_groups_raises_at_step():
    w = tf.tensor([1.0, 2.0], requires_grad=True)
    opt = tf.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.param_groups[0]["lr"] = -1.0
    with pytest.raises(errors.InvalidArgument, match="lr"):
        opt.step()
    opt.param_groups[0]["lr"] = 0.1
    opt.step()
    opt.param_groups[0]["amsgrad"] = True
    with pytest.raises(errors.InvalidArgument, match="amsgrad"):
        opt.step()
    lb = tf.optim.LBFGS([tf.tensor([1.0], requires_grad=True)])
    lb.param_groups[0]["history_size"] = 3
    with pytest.raises(errors.InvalidArgument, match="history_size"):
        lb.step(lambda: 0.0)


def test_parameters_must_require_grad():
    with pytest.raises(errors.RuntimeState, match="requires_grad=True") as info:
        tf.optim.SGD([tf.tensor([1.0, 2.0])], lr=0.1)
    assert isinstance(info.value, RuntimeError)
    assert "parameter 0" in str(info.value)
    w = tf.tensor([1.0], requires_grad=True)
    with pytest.raises(errors.RuntimeState, match="not a leaf"):
        tf.optim.Adam([w, w * 2])
    with pytest.raises(errors.RuntimeState, match="does not require grad"):
        tf.optim.LBFGS([w, tf.tensor([3.0])])


@pytest.mark.parametrize("params,match", [
    ([], "empty"),
    ("tensor", "single Tensor"),
    ([np.ones(3)], "not a tenferro.Tensor"),
    ("duplicate", "more than once"),
    ([{"lr": 0.1}], "'params'"),
])
def test_bad_parameter_lists(params, match):
    w = tf.tensor([1.0], requires_grad=True)
    if params == "tensor":
        params = w
    elif params == "duplicate":
        params = [{"params": [w]}, {"params": [tf.tensor([2.0], requires_grad=True), w]}]
    with pytest.raises(errors.InvalidArgument, match=match):
        tf.optim.SGD(params, lr=0.1)


def test_integer_parameters_are_refused():
    with pytest.raises(errors.Error):
        tf.optim.SGD([tf.tensor([1, 2], requires_grad=True)])


def test_lbfgs_has_one_parameter_group():
    a = tf.tensor([1.0], requires_grad=True)
    b = tf.tensor([2.0], requires_grad=True)
    with pytest.raises(errors.InvalidArgument, match="parameter groups"):
        tf.optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = tf.optim.LBFGS([a])
    with pytest.raises(errors.InvalidArgument, match="parameter groups"):
        opt.add_param_group({"params": [b]})


def test_repr_and_defaults():
    opt = tf.optim.SGD([tf.tensor([1.0], requires_grad=True)], lr=0.1, momentum=0.9)
    text = repr(opt)
    assert text.startswith("SGD (") and "lr: 0.1" in text and "momentum: 0.9" in text
    lb = tf.optim.LBFGS([tf.tensor([1.0], requires_grad=True)], max_iter=8)
    assert lb.param_groups[0]["max_eval"] == 10  # torch's max_iter * 5 // 4
