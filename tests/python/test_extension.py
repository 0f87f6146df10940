"""Extension families written in Python, in eager AD and in traced programs."""

import numpy as np
import pytest

import tenferro as tf
from fdcheck import fd_grad
from tenferro import Spec

RNG = np.random.default_rng(7)


# A family with both rules: y = sin(x) * scale (a parameter).
def _fwd(x, scale=1.0):
    return tf.sin(x) * scale


wave = tf.Family(
    "pytest.wave.v1",
    forward=_fwd,
    jvp=lambda p, t, scale=1.0: (tf.cos(p[0]) * scale * t[0],),
    vjp=lambda p, out, ct, scale=1.0: (tf.cos(p[0]) * scale * ct[0],),
)

# Two inputs, two outputs, a shape rule, NumPy arrays inside.
outer = tf.Family(
    "pytest.outer_and_sum.v1",
    forward=lambda a, b: (np.outer(a, b), np.array(a.sum() + b.sum())),
    shape=lambda ma, mb: [((ma[0][0], mb[0][0]), ma[1]), ((), ma[1])],
    vjp=lambda p, out, ct: (
        (0 if ct[0] is None else ct[0] @ p[1]) + (0 if ct[1] is None else ct[1]) * np.ones_like(p[0]),
        (0 if ct[0] is None else ct[0].T @ p[0]) + (0 if ct[1] is None else ct[1]) * np.ones_like(p[1]),
    ),
    inputs=2,
    outputs=2,
    numpy=True,
)


def test_forward_and_parameters():
    x = RNG.normal(size=5)
    np.testing.assert_allclose(wave(x).numpy(), np.sin(x))
    np.testing.assert_allclose(wave(x, scale=3.0).numpy(), 3 * np.sin(x))
    a, b = RNG.normal(size=3), RNG.normal(size=4)
    m, s = outer(a, b)
    np.testing.assert_allclose(m.numpy(), np.outer(a, b))
    assert abs(s.item() - (a.sum() + b.sum())) < 1e-14


def test_eager_gradients_against_finite_differences():
    x0 = RNG.normal(size=(3, 2))
    x = tf.tensor(x0, requires_grad=True)
    tf.sum(wave(x, scale=2.0) ** 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), fd_grad(lambda v: np.sum((2 * np.sin(v)) ** 2), x0),
                               rtol=1e-7, atol=1e-9)
    a0, b0 = RNG.normal(size=3), RNG.normal(size=4)
    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0, requires_grad=True)
    m, s = outer(a, b)
    (tf.sum(m * m) + 3 * s).backward()
    f = lambda u, v: np.sum(np.outer(u, v) ** 2) + 3 * (u.sum() + v.sum())  # noqa: E731
    np.testing.assert_allclose(a.grad.numpy(), fd_grad(lambda u: f(u, b0), a0), rtol=1e-7)
    np.testing.assert_allclose(b.grad.numpy(), fd_grad(lambda v: f(a0, v), b0), rtol=1e-7)


def test_jvp_and_vjp_are_adjoint():
    x = RNG.normal(size=4)
    v, u = RNG.normal(size=4), RNG.normal(size=4)
    _, jv = tf.autograd.jvp(lambda z: wave(z, scale=0.5), x, v)
    _, vj = tf.autograd.vjp(lambda z: wave(z, scale=0.5), x, u)
    assert abs(float(tf.sum(jv * u)) - float(tf.sum(vj * v))) < 1e-13


def test_traced_program_uses_the_family():
    p = tf.jit(lambda z: tf.sum(wave(z, scale=2.0)), Spec(("n",)))
    x = RNG.normal(size=6)
    assert abs(p(x).item() - 2 * np.sum(np.sin(x))) < 1e-13
    np.testing.assert_allclose(p.grad()(x).numpy(), 2 * np.cos(x), rtol=1e-14)
    np.testing.assert_allclose(p.grad()(x[:3]).numpy(), 2 * np.cos(x[:3]), rtol=1e-14)


def test_missing_rules_and_errors_are_typed():
    only_fwd = tf.Family("pytest.nograd.v1", forward=lambda x: x * 2)
    np.testing.assert_allclose(only_fwd(np.ones(2)).numpy(), [2.0, 2.0])
    with pytest.raises(tf.errors.UnsupportedAdRule):
        only_fwd(tf.ones(2, requires_grad=True))
    with pytest.raises(tf.errors.UnsupportedAdRule):
        tf.autograd.jvp(lambda z: outer(z, z)[1], np.ones(2), np.ones(2))
    failing = tf.Family("pytest.fails.v1", forward=lambda x: 1 / 0)
    with pytest.raises(tf.Error, match="ZeroDivisionError"):
        failing(np.ones(2))
    wrong = tf.Family("pytest.wrong_count.v1", forward=lambda x: (x, x))
    with pytest.raises(tf.errors.ExtensionContract):
        wrong(np.ones(2))
    with pytest.raises(ValueError):
        tf.Family("Not An Id", forward=lambda x: x)
    with pytest.raises(ValueError):
        wave(np.ones(2), np.ones(2))


def test_redefinition_under_the_same_id():
    f1 = tf.Family("pytest.redefined.v1", forward=lambda x: x + 1)
    f2 = tf.Family("pytest.redefined.v1", forward=lambda x: x + 2)
    assert f1(np.zeros(1)).item() == 1.0
    assert f2(np.zeros(1)).item() == 2.0
    assert f1(np.zeros(1)).item() == 1.0


def test_second_order_is_refused_with_a_clear_error():
    with pytest.raises(tf.errors.UnsupportedAdRule, match="second derivatives"):
        tf.autograd.hvp(lambda z: tf.sum(wave(z)), np.ones(3), np.ones(3))
    # First derivatives through the rule ops' linear inputs still work:
    # reverse mode of a forward-mode product (the jvp op's transpose).
    x = np.linspace(0.1, 1.0, 3)
    v = tf.tensor(np.ones(3), requires_grad=True)
    _, t = tf.autograd.jvp(lambda z: wave(z), x, v)
    g = tf.autograd.grad(lambda w: tf.sum(tf.autograd.jvp(lambda z: wave(z), x, w)[1]), v)
    np.testing.assert_allclose(g.detach().numpy(), np.cos(x), rtol=1e-14)
