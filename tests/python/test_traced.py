"""The traced tier from Python: named sizes, prepare once / run many,
transforms, checkpointing and data-dependent ranks."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import Spec

RNG = np.random.default_rng(5)


def energy(a, m):
    return tf.sum(tf.tanh(a @ m) ** 2) + tf.einsum("ij,ij->", a, a)


def test_one_program_serves_several_sizes():
    p = tf.jit(energy, Spec(("n", "n")), Spec(("n", 3)))
    assert p.input_count == 2 and p.output_count == 1
    for n in (2, 5, 9):
        a, m = RNG.normal(size=(n, n)), RNG.normal(size=(n, 3))
        want = np.sum(np.tanh(a @ m) ** 2) + np.sum(a * a)
        assert abs(p(a, m).item() - want) < 1e-12 * abs(want)


def test_prepared_plan_binds_sizes_each_run():
    p = tf.jit(energy, Spec(("n", "n")), Spec(("n", 3)))
    plan = p.prepare(np.ones((4, 4)), np.ones((4, 3)))
    out = plan(np.eye(6), np.ones((6, 3)))
    assert plan.bindings == {"n": 6}
    assert abs(out.item() - (np.sum(np.tanh(np.ones((6, 3))) ** 2) + 6)) < 1e-12
    with pytest.raises(ValueError):
        plan(np.eye(6), np.ones((5, 3)))  # n = 6 and n = 5


def test_transformed_programs_match_eager_ad():
    a, m = RNG.normal(size=(4, 4)), RNG.normal(size=(4, 3))
    p = tf.jit(energy, Spec(("n", "n")), Spec(("n", 3)))
    ga, gm = p.grad()(a, m)
    ea, em = tf.autograd.grad(energy, tf.asarray(a), tf.asarray(m))
    np.testing.assert_allclose(ga.numpy(), ea.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gm.numpy(), em.numpy(), rtol=1e-12)
    g0 = p.grad(wrt=0)(a, m)
    np.testing.assert_allclose(g0.numpy(), ea.numpy(), rtol=1e-12)
    # vjp and jvp programs are adjoint to each other.
    da, dm = RNG.normal(size=a.shape), RNG.normal(size=m.shape)
    _, tangent = p.jvp()(a, m, da, dm)
    _, ca, cm = p.vjp()(a, m, 1.0)
    lhs = tangent.item()
    rhs = np.sum(ca.numpy() * da) + np.sum(cm.numpy() * dm)
    assert abs(lhs - rhs) < 1e-11 * max(1.0, abs(lhs))


def test_hvp_and_grad_inside_trace():
    h = tf.jit(lambda x: tf.sum(x ** 3), Spec(("k",)))
    np.testing.assert_allclose(h.hvp()(np.arange(4.0), np.ones(4)).numpy(), 6 * np.arange(4.0))
    # autograd.grad on traced values builds the gradient graph.
    g = tf.jit(lambda x: tf.autograd.grad(lambda z: tf.sum(tf.sin(z) * z), x), Spec((3,)))
    x = np.arange(3.0)
    np.testing.assert_allclose(g(x).numpy(), np.sin(x) + x * np.cos(x), rtol=1e-14)


def test_checkpoint_region_gives_the_same_gradient():
    def f(x):
        return tf.sum(tf.checkpoint(lambda z: tf.exp(tf.sin(z)) * z, x))

    x = RNG.normal(size=5)
    g = tf.jit(f, Spec((5,))).grad()(x).numpy()
    np.testing.assert_allclose(g, np.exp(np.sin(x)) * (1 + x * np.cos(x)), rtol=1e-13)


def test_families_and_views_inside_trace():
    def f(a):
        s = tf.linalg.svd(a, full_matrices=False)[1]
        return tf.sum(s) + tf.sum(a[1:, 0]) + tf.sum(a.T[0]) + tf.mean(tf.fft.rfft(a, axis=0).real)

    a = RNG.normal(size=(4, 3))
    want = (np.sum(np.linalg.svd(a, compute_uv=False)) + a[1:, 0].sum() + a.T[0].sum()
            + np.mean(np.fft.rfft(a, axis=0).real))
    assert abs(tf.jit(f, Spec((4, 3)))(a).item() - want) < 1e-12


def test_data_dependent_rank():
    p = tf.jit(lambda a: tf.linalg.svd_truncated(a, cutoff=0.01)[1], Spec((5, 5)))
    s = p(np.diag([3.0, 2.0, 1.0, 0.1, 0.01]))
    np.testing.assert_allclose(s.numpy(), [3.0, 2.0, 1.0, 0.1])
    s = p(np.diag([3.0, 0.0, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(s.numpy(), [3.0])


def test_trace_errors():
    with pytest.raises(NotImplementedError):
        tf.jit(lambda x: x if x else x, Spec((2,)))
    with pytest.raises(ValueError):
        tf.jit(lambda x: 1.0, Spec((2,)))
    p = tf.jit(lambda x: tf.sum(x), Spec(("n",), tf.float32))
    with pytest.raises(TypeError):
        p(np.ones(3))  # float64 for a float32 input
    with pytest.raises(ValueError):
        p(np.ones(3, dtype=np.float32), np.ones(3, dtype=np.float32))
    with pytest.raises(NotImplementedError):
        tf.jit(lambda x: x[1:], Spec(("n",)))  # slicing a named size


def test_functional_transforms_inside_jit():
    def f(z):
        return tf.sum(tf.sin(z) * z * z)

    def program(x, v):
        _, hv = tf.autograd.hvp(f, x, v)
        _, jv = tf.autograd.jvp(lambda z: tf.sin(z), x, v)
        _, vj = tf.autograd.vjp(lambda z: tf.sin(z), x, v)
        return hv, jv, vj

    p = tf.jit(program, Spec(("n",)), Spec(("n",)))
    x, v = RNG.normal(size=4), RNG.normal(size=4)
    hv, jv, vj = p(x, v)
    hess = (2 - x * x) * np.sin(x) + 4 * x * np.cos(x)
    np.testing.assert_allclose(hv.numpy(), hess * v, rtol=1e-12)
    np.testing.assert_allclose(jv.numpy(), np.cos(x) * v, rtol=1e-14)
    np.testing.assert_allclose(vj.numpy(), np.cos(x) * v, rtol=1e-14)
