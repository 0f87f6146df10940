"""Elementwise ops, broadcasting, promotion and reductions against NumPy."""

import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "abs", "floor",
                                  "expm1", "log1p", "arctan", "sign", "square"])
def test_unary_matches_numpy(name):
    a = RNG.uniform(0.1, 2.0, size=(3, 4))
    np.testing.assert_allclose(getattr(tf, name)(a).numpy(), getattr(np, name)(a), rtol=1e-13)


def test_broadcasting_follows_numpy():
    shapes = [((3, 1, 5), (4, 1)), ((5,), (2, 3, 5)), ((2, 1), (1, 3)), ((), (2, 2)), ((4, 1, 1), (3, 1))]
    for sa, sb in shapes:
        a, b = RNG.normal(size=sa), RNG.normal(size=sb)
        for op in (np.add, np.subtract, np.multiply, np.maximum):
            got = {np.add: tf.add, np.subtract: tf.subtract, np.multiply: tf.multiply,
                   np.maximum: tf.maximum}[op](a, b)
            np.testing.assert_allclose(got.numpy(), op(a, b), rtol=1e-15)
        np.testing.assert_allclose((tf.asarray(a) / b).numpy(), a / b, rtol=1e-15)


def test_operators_with_scalars_and_arrays():
    a = tf.tensor([1.0, 2.0, 4.0])
    np.testing.assert_allclose((2 * a + 1).numpy(), [3.0, 5.0, 9.0])
    np.testing.assert_allclose((1 / a).numpy(), [1.0, 0.5, 0.25])
    np.testing.assert_allclose((a ** 2).numpy(), [1.0, 4.0, 16.0])
    np.testing.assert_allclose((2 ** a).numpy(), [2.0, 4.0, 16.0])
    np.testing.assert_allclose((-a).numpy(), [-1.0, -2.0, -4.0])
    assert isinstance(np.ones(3) + a, tf.Tensor)
    assert (a > 1.5).dtype == tf.bool_
    np.testing.assert_array_equal((a >= 2).numpy(), [False, True, True])
    np.testing.assert_array_equal(((a > 1) & (a < 4)).numpy(), [False, True, False])
    np.testing.assert_array_equal((~(a > 1)).numpy(), [True, False, False])


def test_scalar_promotion_like_numpy():
    f = tf.ones(2, dtype=tf.float32)
    assert (f * 2.0).dtype == tf.float32
    assert (f * 2).dtype == tf.float32
    i = tf.arange(3)
    assert (i + 1).dtype == tf.int64
    assert (i * 0.5).dtype == tf.float64
    assert (i / 2).dtype == tf.float64
    assert (f + 1j).dtype == tf.complex64
    assert (tf.ones(2, dtype=tf.float32) + tf.ones(2)).dtype == tf.float64


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(axis, keepdims):
    a = RNG.normal(size=(2, 3, 4))
    for name in ("sum", "mean", "max", "min", "prod"):
        got = getattr(tf, name)(a, axis=axis, keepdims=keepdims)
        want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)
    np.testing.assert_allclose(tf.var(a, axis=axis, keepdims=keepdims).numpy(),
                               np.var(a, axis=axis, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(tf.std(a, axis=axis, ddof=1, keepdims=keepdims).numpy(),
                               np.std(a, axis=axis, ddof=1, keepdims=keepdims), rtol=1e-12)


def test_arg_reductions_and_methods():
    a = RNG.normal(size=(3, 5))
    t = tf.from_numpy(a)
    assert int(tf.argmax(a)) == np.argmax(a)
    np.testing.assert_array_equal(t.argmin(axis=1).numpy(), np.argmin(a, axis=1))
    np.testing.assert_array_equal(tf.argmax(a, axis=0).numpy(), np.argmax(a, axis=0))
    np.testing.assert_allclose(t.sum(axis=0).numpy(), a.sum(axis=0))
    assert bool((t > 100).any()) is False and bool((t < 100).all()) is True


def test_structural_ops_match_numpy():
    a = RNG.normal(size=(3, 4))
    b = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(tf.concatenate([a, b], axis=1).numpy(), np.concatenate([a, b], 1))
    np.testing.assert_array_equal(tf.stack([a, b], axis=-1).numpy(), np.stack([a, b], -1))
    np.testing.assert_allclose(tf.cumsum(a, axis=1).numpy(), np.cumsum(a, axis=1))
    np.testing.assert_array_equal(tf.sort(a, axis=0).numpy(), np.sort(a, axis=0))
    np.testing.assert_array_equal(tf.argsort(a).numpy(), np.argsort(a))
    np.testing.assert_array_equal(tf.flip(a, axis=1).numpy(), np.flip(a, axis=1))
    np.testing.assert_array_equal(tf.where(a > 0, a, 0.0).numpy(), np.where(a > 0, a, 0.0))
    np.testing.assert_array_equal(tf.clip(a, -0.5, 0.5).numpy(), np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(tf.tril(a, 1).numpy(), np.tril(a, 1))
    np.testing.assert_array_equal(tf.triu(a, -1).numpy(), np.triu(a, -1))
    np.testing.assert_allclose(tf.kron(a, b[:2, :2]).numpy(), np.kron(a, b[:2, :2]))
    np.testing.assert_array_equal(tf.transpose(np.zeros((2, 3, 4)), (2, 0, 1)).shape, (4, 2, 3))
    np.testing.assert_array_equal(tf.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape, (3, 4, 2))
    np.testing.assert_array_equal(tf.diagonal(a).numpy(), np.diagonal(a))
    np.testing.assert_array_equal(tf.diagonal(np.arange(24).reshape(2, 3, 4), 1, 1, 2).numpy(),
                                  np.diagonal(np.arange(24).reshape(2, 3, 4), 1, 1, 2))
    np.testing.assert_array_equal(tf.squeeze(np.zeros((1, 3, 1))).shape, (3,))
    np.testing.assert_array_equal(tf.expand_dims(np.zeros((3,)), 0).shape, (1, 3))
    np.testing.assert_array_equal(tf.broadcast_to(np.arange(3), (2, 3)).numpy(),
                                  np.broadcast_to(np.arange(3), (2, 3)))
    assert tf.astype(a, tf.float32).dtype == tf.float32


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 3)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                   ((7, 2, 3), (7, 3, 2))])
def test_matmul_matches_numpy(sa, sb):
    a, b = RNG.normal(size=sa), RNG.normal(size=sb)
    got = tf.asarray(a) @ b
    want = a @ b
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13, atol=1e-13)


def test_complex_ops():
    z = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    np.testing.assert_allclose(tf.exp(z).numpy(), np.exp(z), rtol=1e-13)
    np.testing.assert_allclose(tf.abs(z).numpy(), np.abs(z), rtol=1e-14)
    np.testing.assert_allclose((tf.asarray(z) @ z).numpy(), z @ z, rtol=1e-13)
    np.testing.assert_allclose(tf.angle(z).numpy(), np.angle(z), rtol=1e-14)


def test_array_promotion_follows_numpy():
    import itertools
    dts = [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
    for a, b in itertools.product(dts, dts):
        for sa, sb in (((3,), (3,)), ((), (3,)), ((3,), ())):
            x, y = np.ones(sa, a), np.ones(sb, b)
            assert (tf.asarray(x) + tf.asarray(y)).dtype.numpy == (x + y).dtype, (a, sa, b, sb)
            if not (np.dtype(a).kind == "c" or np.dtype(b).kind == "c"):  # complex: unordered here
                assert tf.maximum(x, y).dtype.numpy == np.maximum(x, y).dtype, (a, sa, b, sb)
            if len(sa) and len(sb) and a is not np.bool_ and b is not np.bool_:
                assert tf.matmul(x, y).dtype.numpy == (x @ y).dtype, (a, b)
    i, f = np.arange(3, dtype=np.int32), np.ones(3, np.float32)
    assert tf.einsum("i,i->", i, f).dtype.numpy == np.einsum("i,i->", i, f).dtype
    assert tf.where(i > 0, i, f).dtype.numpy == np.where(i > 0, i, f).dtype
