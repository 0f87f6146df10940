"""Control flow and fixed points from Python: cond, while_loop and
fixed_point inside tenferro.jit and eagerly, with implicit derivatives
checked against NumPy references and finite differences."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import Spec

RNG = np.random.default_rng(11)
A = RNG.uniform(-1, 1, size=(4, 4)) * 0.2
B = RNG.uniform(-1, 1, size=(4, 1))


def step(x, a, b):
    return tf.tanh(a @ x + b) * 0.5


def np_solution(a, b, iters=200):
    x = np.zeros((4, 1))
    for _ in range(iters):
        x = np.tanh(a @ x + b) * 0.5
    return x


def np_loss(a, b):
    x = np_solution(a, b)
    return float(np.sum(np.sin(x) * x))


def fd_grad_b(a, b, h=1e-6):
    g = np.zeros_like(b)
    for i in range(b.size):
        e = np.zeros_like(b)
        e.flat[i] = h
        g.flat[i] = (np_loss(a, b + e) - np_loss(a, b - e)) / (2 * h)
    return g


def test_eager_fixed_point_value_and_backward():
    a = tf.tensor(A, requires_grad=True)
    b = tf.tensor(B, requires_grad=True)
    x, iterations, residual, converged = tf.fixed_point(
        step, tf.zeros((4, 1)), a, b, tol=1e-14, full_output=True)
    assert converged.item() and residual.item() <= 1e-14 and iterations.item() > 5
    np.testing.assert_allclose(x.detach().numpy(), np_solution(A, B), atol=1e-13)
    loss = tf.sum(tf.sin(x) * x)
    loss.backward()
    np.testing.assert_allclose(b.grad.numpy(), fd_grad_b(A, B), atol=1e-7)


def test_traced_fixed_point_gradient_equals_eager():
    def prog(a, b):
        x = tf.fixed_point(step, tf.zeros((4, 1)), a, b, tol=1e-14)
        return tf.sum(tf.sin(x) * x)

    p = tf.jit(prog, Spec((4, 4)), Spec((4, 1)))
    assert p.count_ops("fixed_point") == 1
    assert abs(p(A, B).item() - np_loss(A, B)) < 1e-12
    g = p.grad(wrt=1)(A, B)
    np.testing.assert_allclose(g.numpy(), fd_grad_b(A, B), atol=1e-7)


def test_fixed_point_of_a_tuple_state():
    # (u, v) = (0.5 cos v + c, 0.5 sin u)
    c = tf.tensor(np.array([0.1, -0.4, 0.7]), requires_grad=True)
    u, v = tf.fixed_point(lambda s, c: (tf.cos(s[1]) * 0.5 + c, tf.sin(s[0]) * 0.5),
                          (tf.zeros(3), tf.zeros(3)), c, tol=1e-14)
    np.testing.assert_allclose(u.detach().numpy(), 0.5 * np.cos(v.detach().numpy()) + c.detach().numpy(),
                               atol=1e-13)
    tf.sum(u * v).backward()
    assert c.grad.shape == (3,)


def test_fixed_point_non_convergence():
    with pytest.raises(tf.errors.NoConvergence, match="after 2 iterations"):
        tf.fixed_point(step, tf.zeros((4, 1)), tf.tensor(A), tf.tensor(B), max_iter=2)
    x, iterations, residual, converged = tf.fixed_point(
        step, tf.zeros((4, 1)), tf.tensor(A), tf.tensor(B), max_iter=2, throw_on_failure=False,
        full_output=True)
    assert not converged.item() and iterations.item() == 2 and residual.item() > 1e-10


def test_while_loop_traced_and_eager():
    def prog(x):
        return tf.while_loop(lambda c: tf.sum(c[0]) < 100.0, lambda c: (c[0] * 2.0, c[1] + 1.0),
                             (x, tf.zeros(())))

    p = tf.jit(prog, Spec(("n",)))
    x, k = p(np.ones(3))
    np.testing.assert_allclose(x.numpy(), np.full(3, 64.0))
    assert k.item() == 6.0
    x, k = p(np.ones(7))  # another n, same program
    np.testing.assert_allclose(x.numpy(), np.full(7, 16.0))
    assert k.item() == 4.0
    assert tf.while_loop(lambda c: c < 10, lambda c: c + 3, tf.tensor(1.0)).item() == 10.0


def test_while_loop_refuses_a_changing_carry_and_reverse_mode():
    with pytest.raises(tf.errors.ShapeMismatch, match="carry 0"):
        tf.jit(lambda x: tf.while_loop(lambda c: tf.sum(c) < 10.0,
                                       lambda c: tf.concatenate([c, c]), x), Spec((2,)))
    p = tf.jit(lambda x: tf.sum(tf.while_loop(lambda c: tf.sum(c) < 10.0, lambda c: c * 2.0, x)),
               Spec((2,)))
    with pytest.raises(tf.errors.UnsupportedAdRule, match="fixed_point"):
        p.grad(wrt=0)


def test_cond_takes_the_branch_and_differentiates_it():
    def prog(x):
        return tf.sum(tf.cond(tf.sum(x) > 0, lambda y: y * y, lambda y: tf.sin(y), x))

    p = tf.jit(prog, Spec(("n",)))
    g = p.grad(wrt=0)
    pos, neg = np.array([1.0, 2.0]), np.array([-1.0, 0.5, -0.2])
    assert abs(p(pos).item() - 5.0) < 1e-14
    np.testing.assert_allclose(g(pos).numpy(), 2 * pos)
    np.testing.assert_allclose(g(neg).numpy(), np.cos(neg))
    # Eagerly it is a Python if.
    assert tf.cond(tf.tensor(True), lambda: tf.tensor(1.0), lambda: tf.tensor(2.0)).item() == 1.0


def test_scan_traced_equals_the_python_loop_and_differentiates():
    def cumulative(x):
        carry, ys = tf.scan(lambda c, xi: (c * 0.9 + xi, c * xi), tf.zeros(3), x)
        return tf.sum(carry) + tf.sum(ys)

    xs = RNG.normal(size=(5, 3))
    p = tf.jit(cumulative, Spec(("n", 3)))
    assert p.count_ops("scan") == 1
    c, total = np.zeros(3), 0.0
    for xi in xs:
        total += np.sum(c * xi)
        c = c * 0.9 + xi
    want = np.sum(c) + total
    assert abs(p(xs).item() - want) < 1e-12
    assert abs(cumulative(tf.tensor(xs)).item() - want) < 1e-12  # eager: a Python loop
    g = p.grad(wrt=0)(xs).numpy()
    h = 1e-6
    fd = np.zeros_like(xs)
    for idx in np.ndindex(*xs.shape):
        e = np.zeros_like(xs)
        e[idx] = h
        fd[idx] = (p(xs + e).item() - p(xs - e).item()) / (2 * h)
    np.testing.assert_allclose(g, fd, atol=1e-7)
    # Checkpointed reverse mode: the same gradient.
    q = tf.jit(lambda x: tf.sum(tf.scan(lambda c, xi: (c * 0.9 + xi, c * xi), tf.zeros(3), x,
                                        checkpoint_every=2)[1]), Spec(("n", 3)))
    r = tf.jit(lambda x: tf.sum(tf.scan(lambda c, xi: (c * 0.9 + xi, c * xi), tf.zeros(3), x)[1]),
               Spec(("n", 3)))
    np.testing.assert_allclose(q.grad(wrt=0)(xs).numpy(), r.grad(wrt=0)(xs).numpy(), atol=1e-14)


def test_fixed_point_linear_solvers_agree():
    grads = []
    for solver in ("iterate", "direct", "auto"):
        b = tf.tensor(B, requires_grad=True)
        x = tf.fixed_point(step, tf.zeros((4, 1)), tf.tensor(A), b, tol=1e-14, linear_solver=solver)
        tf.sum(tf.sin(x) * x).backward()
        grads.append(b.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)
    np.testing.assert_allclose(grads[0], grads[2], atol=1e-12)
    with pytest.raises(tf.errors.InvalidArgument, match="linear_solver"):
        tf.fixed_point(step, tf.zeros((4, 1)), tf.tensor(A), tf.tensor(B), linear_solver="gmres")
