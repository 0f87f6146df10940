"""Activations, NumPy/PyTorch helpers and layout ops against torch and NumPy."""

import numpy as np
import pytest

import tenferro as tf

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(11)


@pytest.mark.parametrize("name,kwargs", [
    ("relu", {}), ("relu6", {}), ("selu", {}), ("silu", {}), ("mish", {}), ("hardsigmoid", {}),
    ("softsign", {}), ("tanhshrink", {}), ("logsigmoid", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {"alpha": 0.7}), ("celu", {"alpha": 1.3}), ("softplus", {"beta": 2.0, "threshold": 5.0}),
    ("hardtanh", {"min_val": -0.5, "max_val": 0.8}), ("hardshrink", {"lambd": 0.3}),
    ("softshrink", {"lambd": 0.3}), ("threshold", {"threshold": 0.1, "value": -2.0}),
])
def test_activations_and_gradients_match_torch(name, kwargs):
    a = RNG.normal(size=(3, 5)) * 3
    x = tf.tensor(a, requires_grad=True)
    y = getattr(tf, name)(x, **kwargs)
    tf.sum(y * y).backward()
    xt = torch.tensor(a, requires_grad=True)
    yt = getattr(F, name)(xt, *kwargs.values()) if name == "threshold" else getattr(F, name)(xt, **kwargs)
    torch.sum(yt * yt).backward()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-14)
    # torch 1.13's hardsigmoid and celu backward kernels use float constants
    # (1.0f / 6.0f, ...): their float64 gradients are good to ~1e-7 only.
    rtol = 1e-7 if name in ("hardsigmoid", "celu") else 1e-10
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=1e-12)


def test_prelu_per_channel_weight():
    a = RNG.normal(size=(2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(tf.prelu(a, w).numpy(), F.prelu(torch.tensor(a), torch.tensor(w)).numpy(),
                               rtol=1e-14)


def test_numpy_helpers():
    a = np.array([1.0, np.nan, np.inf, -np.inf, -2.5, 0.5, 1.5])
    np.testing.assert_array_equal(tf.nan_to_num(a, posinf=9.0).numpy(), np.nan_to_num(a, posinf=9.0))
    np.testing.assert_array_equal(tf.round(np.array([0.5, 1.5, 2.5, -0.5])).numpy(), [0.0, 2.0, 2.0, -0.0])
    np.testing.assert_allclose(tf.round(np.array([1.234, 5.678]), decimals=1).numpy(), [1.2, 5.7])
    b = RNG.normal(size=(3, 4))
    c = RNG.normal(size=(4,))
    np.testing.assert_array_equal(tf.fmax(b, c).numpy(), np.fmax(b, c))
    np.testing.assert_array_equal(tf.fmin(b, c).numpy(), np.fmin(b, c))
    np.testing.assert_allclose(tf.deg2rad(b).numpy(), np.deg2rad(b))
    np.testing.assert_allclose(tf.complex(b, b).numpy(), b + 1j * b)
    np.testing.assert_allclose(tf.polar(np.abs(b), b).numpy(), np.abs(b) * np.exp(1j * b), rtol=1e-14)
    np.testing.assert_allclose(tf.float_power(np.abs(b), 2.5).numpy(), np.float_power(np.abs(b), 2.5))
    d = b.copy()
    d[0, 1] = np.nan
    np.testing.assert_allclose(tf.nansum(d, axis=1).numpy(), np.nansum(d, axis=1))
    np.testing.assert_allclose(tf.nanmean(d).numpy(), np.nanmean(d))
    m, e = tf.frexp(np.array([8.0, 0.75]))
    np.testing.assert_allclose(m.numpy(), [0.5, 0.75])
    np.testing.assert_array_equal(e.numpy(), [4, 0])
    np.testing.assert_allclose(tf.polygamma(1, np.array([1.0])).numpy(), [np.pi ** 2 / 6], rtol=1e-14)


def test_layout_ops_match_numpy_and_torch():
    a = RNG.normal(size=(2, 3, 4))
    np.testing.assert_array_equal(tf.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=7).numpy(),
                                  np.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=7))
    np.testing.assert_array_equal(tf.pad(a, 1).numpy(), np.pad(a, 1))
    for reps in (2, (2, 1), (1, 2, 3), (2, 1, 1, 2)):
        np.testing.assert_array_equal(tf.tile(a, reps).numpy(), np.tile(a, reps))
    for shift, axis in ((1, None), (-2, 1), ((1, 2), (0, 2)), (5, -1)):
        np.testing.assert_array_equal(tf.roll(a, shift, axis).numpy(), np.roll(a, shift, axis))
    v, i = tf.topk(a, 2, axis=1)
    vt, it = torch.topk(torch.tensor(a), 2, dim=1)
    np.testing.assert_array_equal(v.numpy(), vt.numpy())
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    idx = np.argsort(a, axis=2)
    np.testing.assert_array_equal(tf.take_along_axis(a, idx, 2).numpy(), np.take_along_axis(a, idx, 2))
    z = np.zeros((3, 4))
    ind = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    src = np.ones((2, 4))
    want = torch.zeros(3, 4, dtype=torch.float64).scatter_add(0, torch.tensor(ind), torch.tensor(src))
    np.testing.assert_array_equal(tf.scatter_add(z, 0, ind, src).numpy(), want.numpy())
    x = RNG.normal(size=(2, 3))
    for off in (0, 1, -1):
        np.testing.assert_array_equal(tf.diag_embed(x, off).numpy(),
                                      torch.diag_embed(torch.tensor(x), off).numpy())
    sq = RNG.normal(size=(4, 4, 3))
    for off, a1, a2 in ((0, 0, 1), (1, 0, 1), (-1, 1, 2), (2, 2, 0)):
        np.testing.assert_allclose(tf.trace(sq, off, a1, a2).numpy(), np.trace(sq, off, a1, a2))
