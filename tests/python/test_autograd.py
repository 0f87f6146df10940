"""Eager AD from Python against torch.autograd and finite differences."""

import numpy as np
import pytest

import tenferro as tf
from fdcheck import fd_grad

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(1)


def test_backward_matches_torch():
    a = RNG.normal(size=(3, 4))
    b = RNG.normal(size=(4, 2))
    x = tf.tensor(a, requires_grad=True)
    w = tf.tensor(b, requires_grad=True)
    loss = tf.sum(tf.tanh(x @ w) ** 2) + tf.mean(tf.exp(x[:, 1:]))
    loss.backward()
    xt = torch.tensor(a, requires_grad=True)
    wt = torch.tensor(b, requires_grad=True)
    lt = torch.sum(torch.tanh(xt @ wt) ** 2) + torch.mean(torch.exp(xt[:, 1:]))
    lt.backward()
    assert abs(loss.item() - lt.item()) < 1e-13
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12)


def test_grads_accumulate_and_clear():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None and x.is_leaf
    (x * x).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    x.grad = None
    assert x.grad is None
    (3 * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_broadcast_and_indexing_gradients_match_torch():
    a = RNG.normal(size=(3, 4))
    b = RNG.normal(size=(4,))
    x = tf.tensor(a, requires_grad=True)
    y = tf.tensor(b, requires_grad=True)
    loss = tf.sum((x * y)[1:, ::2] ** 2) + tf.sum(x.T[0]) + tf.sum(x.reshape(2, 6)[:, 3])
    loss.backward()
    xt = torch.tensor(a, requires_grad=True)
    yt = torch.tensor(b, requires_grad=True)
    lt = (torch.sum((xt * yt)[1:, ::2] ** 2) + torch.sum(xt.T[0])
          + torch.sum(xt.reshape(2, 6)[:, 3]))
    lt.backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), yt.grad.numpy(), rtol=1e-12)


def test_no_grad_records_nothing():
    x = tf.ones(3, requires_grad=True)
    with tf.no_grad():
        assert not tf.is_grad_enabled()
        y = x * 2
    assert tf.is_grad_enabled()
    assert not y.requires_grad
    z = (x * 2).detach()
    assert not z.requires_grad


def test_functional_grad_against_finite_differences():
    a = RNG.normal(size=(3, 3))

    def f_np(m):
        return np.sum(np.sin(m @ m) * m)

    g = tf.autograd.grad(lambda m: tf.sum(tf.sin(m @ m) * m), tf.tensor(a))
    np.testing.assert_allclose(g.numpy(), fd_grad(f_np, a), rtol=1e-7, atol=1e-8)


def test_grad_of_several_inputs_and_allow_unused():
    x, y = tf.tensor([1.0, 2.0]), tf.tensor([3.0, 4.0])
    gx, gy = tf.autograd.grad(lambda a, b: tf.sum(a * b * b), x, y)
    np.testing.assert_allclose(gx.numpy(), [9.0, 16.0])
    np.testing.assert_allclose(gy.numpy(), [6.0, 16.0])
    with pytest.raises(ValueError):
        tf.autograd.grad(lambda a, b: tf.sum(a), x, y)
    gx, gy = tf.autograd.grad(lambda a, b: tf.sum(a), x, y, allow_unused=True)
    np.testing.assert_allclose(gy.numpy(), [0.0, 0.0])


def test_jvp_vjp_adjoint_consistency_and_hvp():
    a = RNG.normal(size=(4,))
    v = RNG.normal(size=(4,))
    u = RNG.normal(size=(2,))

    def f(z):
        return tf.stack([tf.sum(tf.exp(z) * z), tf.sum(tf.sin(z) ** 2)])

    _, jv = tf.autograd.jvp(f, a, v)
    _, vj = tf.autograd.vjp(f, a, u)
    assert abs(float(tf.sum(jv * u)) - float(tf.sum(vj * v))) < 1e-12

    def s(z):
        return tf.sum(z ** 3)

    out, hv = tf.autograd.hvp(s, a, v)
    np.testing.assert_allclose(hv.numpy(), 6 * a * v, rtol=1e-13)
    assert abs(out.item() - np.sum(a ** 3)) < 1e-12
    gg = tf.autograd.grad(lambda z: tf.sum(tf.autograd.grad(s, z) * tf.asarray(v)), tf.tensor(a))
    np.testing.assert_allclose(gg.numpy(), 6 * a * v, rtol=1e-13)


def test_complex_gradients_follow_torch_convention():
    z = RNG.normal(size=(3,)) + 1j * RNG.normal(size=(3,))
    x = tf.tensor(z, requires_grad=True)
    tf.sum(tf.abs(x * x)).backward()
    zt = torch.tensor(z, requires_grad=True)
    torch.sum(torch.abs(zt * zt)).backward()
    np.testing.assert_allclose(x.grad.numpy(), zt.grad.numpy(), rtol=1e-12)


def test_in_place_on_grad_tensor_is_refused():
    x = tf.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        x += 1
    with pytest.raises(RuntimeError):
        x[0] = 3.0
    with pytest.raises(TypeError):
        tf.arange(3).requires_grad_()
