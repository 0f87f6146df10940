"""linalg, fft and einsum against NumPy/SciPy and torch (values and gradients)."""

import numpy as np
import pytest

import tenferro as tf

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(2)


def spd(n, batch=()):
    a = RNG.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_linalg_values_match_numpy(batch):
    a = RNG.normal(size=batch + (4, 4)) + 4 * np.eye(4)
    b = RNG.normal(size=batch + (4, 2))
    np.testing.assert_allclose(tf.linalg.inv(a).numpy(), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.det(a).numpy(), np.linalg.det(a), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.solve(a, b).numpy(), np.linalg.solve(a, b), rtol=1e-10)
    s, l = tf.linalg.slogdet(a)
    s0, l0 = np.linalg.slogdet(a)
    np.testing.assert_allclose(s.numpy(), s0)
    np.testing.assert_allclose(l.numpy(), l0, rtol=1e-12)
    c = spd(4, batch)
    L = tf.linalg.cholesky(c)
    np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(c), rtol=1e-10)
    w, v = tf.linalg.eigh(c)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(c), rtol=1e-10)
    np.testing.assert_allclose((v @ (w[..., :, None] * v.mT)).numpy(), c, rtol=1e-10)
    m = RNG.normal(size=batch + (5, 3))
    U, S, Vh = tf.linalg.svd(m, full_matrices=False)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(m, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose((U * S[..., None, :]) @ Vh, m, rtol=1e-10, atol=1e-12)
    q, r = tf.linalg.qr(m)
    np.testing.assert_allclose((q @ r).numpy(), m, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tf.linalg.matrix_exp(a * 0.1).numpy(),
                               np.stack([__import__("scipy.linalg").linalg.expm(x)
                                         for x in (a * 0.1).reshape(-1, 4, 4)]).reshape(a.shape),
                               rtol=1e-10)


def test_vector_rhs_triangular_and_norms():
    a = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    b = RNG.normal(size=(4,))
    np.testing.assert_allclose(tf.linalg.solve(a, b).numpy(), np.linalg.solve(a, b), rtol=1e-10)
    u = np.triu(a)
    bb = RNG.normal(size=(4, 3))
    import scipy.linalg as sl
    np.testing.assert_allclose(tf.linalg.solve_triangular(u, bb, upper=True).numpy(),
                               sl.solve_triangular(u, bb, lower=False), rtol=1e-10)
    for ord in (None, "fro", "nuc", 1, -1, 2, np.inf):
        np.testing.assert_allclose(float(tf.linalg.norm(a, ord)), np.linalg.norm(a, ord), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.norm(a, axis=1).numpy(), np.linalg.norm(a, axis=1), rtol=1e-12)
    np.testing.assert_allclose(tf.linalg.multi_dot([a, a.T, a]).numpy(), a @ a.T @ a, rtol=1e-10)


def test_svd_truncated():
    m = RNG.normal(size=(6, 5))
    U, S, Vh, rank, dw = tf.linalg.svd_truncated(m, max_rank=3)
    assert rank == 3 and U.shape == (6, 3) and Vh.shape == (3, 5)
    s = np.linalg.svd(m, compute_uv=False)
    np.testing.assert_allclose(S.numpy(), s[:3], rtol=1e-12)
    np.testing.assert_allclose(float(dw), np.sum(s[3:] ** 2) / np.sum(s ** 2), rtol=1e-10)


def test_linalg_gradients_match_torch():
    a = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    x = tf.tensor(a, requires_grad=True)
    loss = (tf.sum(tf.linalg.inv(x) ** 2) + tf.linalg.slogdet(x)[1]
            + tf.sum(tf.linalg.svd(x, full_matrices=False)[1])
            + tf.sum(tf.linalg.solve(x, tf.asarray(a[:, :2]))))
    loss.backward()
    xt = torch.tensor(a, requires_grad=True)
    lt = (torch.sum(torch.linalg.inv(xt) ** 2) + torch.linalg.slogdet(xt)[1]
          + torch.sum(torch.linalg.svdvals(xt))
          + torch.sum(torch.linalg.solve(xt, torch.tensor(a[:, :2]))))
    lt.backward()
    np.testing.assert_allclose(loss.item(), lt.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    # eigh reads one triangle (docs/linalg.md): differentiate through a
    # symmetric expression of the variable, as torch's gradcheck does.
    y = tf.tensor(a, requires_grad=True)
    w, v = tf.linalg.eigh(y + y.T)
    (tf.sum(w ** 2) + tf.sum(tf.abs(v[:, 0]) ** 4)).backward()
    yt = torch.tensor(a, requires_grad=True)
    wt, vt = torch.linalg.eigh(yt + yt.T)
    (torch.sum(wt ** 2) + torch.sum(torch.abs(vt[:, 0]) ** 4)).backward()
    np.testing.assert_allclose(y.grad.numpy(), yt.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "hfft", "ihfft"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_fft_one_axis_matches_numpy(name, axis):
    real = name in ("rfft", "ihfft")
    a = RNG.normal(size=(6, 5)) if real else RNG.normal(size=(6, 5)) + 1j * RNG.normal(size=(6, 5))
    for norm in (None, "ortho", "forward"):
        np.testing.assert_allclose(getattr(tf.fft, name)(a, axis=axis, norm=norm).numpy(),
                                   getattr(np.fft, name)(a, axis=axis, norm=norm), rtol=1e-10,
                                   atol=1e-12)
    np.testing.assert_allclose(tf.fft.fft(a, n=8, axis=axis).numpy(), np.fft.fft(a, n=8, axis=axis),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "rfft2", "irfft2"])
def test_fft_many_axes_matches_numpy(name):
    a = RNG.normal(size=(4, 6, 8))
    if name.startswith("i"):
        a = a + 1j * RNG.normal(size=a.shape)
    np.testing.assert_allclose(getattr(tf.fft, name)(a).numpy(), getattr(np.fft, name)(a),
                               rtol=1e-10, atol=1e-12)
    if name.endswith("n"):
        np.testing.assert_allclose(getattr(tf.fft, name)(a, axes=(0, 2)).numpy(),
                                   getattr(np.fft, name)(a, axes=(0, 2)), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(getattr(tf.fft, name)(a, s=(4, 6)).numpy(),
                                   getattr(np.fft, name)(a, s=(4, 6)), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(tf.fft.fftshift(a.real, axes=(1,)).numpy(),
                                  np.fft.fftshift(a.real, axes=(1,)))


def test_fft_gradient_matches_torch():
    a = RNG.normal(size=(4, 6))
    x = tf.tensor(a, requires_grad=True)
    tf.sum(tf.abs(tf.fft.rfft2(x)) ** 2 * tf.arange(4.0)[:, None]).backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.sum(torch.abs(torch.fft.rfft2(xt)) ** 2 * torch.arange(4.0, dtype=torch.float64)[:, None]).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(3, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    ("abc,cd,db->a", [(2, 3, 4), (4, 5), (5, 3)]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]),
    ("Ab,bA->", [(3, 4), (4, 3)]),
])
def test_einsum_matches_numpy(eq, shapes):
    ops = [RNG.normal(size=s) for s in shapes]
    got = tf.einsum(eq, *ops)
    want = np.einsum(eq, *ops)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_einsum_options_path_and_gradient():
    a, b, c = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 5)), RNG.normal(size=(5, 3))
    plan = tf.einsum_path("ij,jk,ki->", a, b, c)
    assert len(plan["path"]) == 2 and plan["flops"] > 0
    v = tf.einsum("ij,jk,ki->", a, b, c, path=[(0, 1), (0, 1)])
    np.testing.assert_allclose(v.item(), np.einsum("ij,jk,ki->", a, b, c), rtol=1e-12)
    x = tf.tensor(a, requires_grad=True)
    tf.einsum("ij,jk,ki->", x, b, c, strategy="greedy").backward()
    np.testing.assert_allclose(x.grad.numpy(), (b @ c).T, rtol=1e-12)
    with pytest.raises(ValueError):
        tf.einsum("ij,jk->ik", a, a)
    with pytest.raises(ValueError):
        tf.einsum("ij->ik", a)


def test_einsum_work_budget_is_deterministic():
    # A ring of 40 matrices: the annealing search runs; a small work budget
    # stops it at the same tree every time, and the units spent are reported.
    eq = ",".join(chr(0x4E00 + k) + chr(0x4E00 + (k + 1) % 40) for k in range(40)) + "->"
    shapes = [(3, 3)] * 40
    full = tf.einsum_path(eq, *shapes, strategy="anneal")
    assert not full["search_cut_short"] and full["search_work"] > 0
    small = [tf.einsum_path(eq, *shapes, strategy="anneal", search_work=2e4) for _ in range(2)]
    assert small[0]["search_cut_short"]
    assert small[0]["path"] == small[1]["path"]
    assert small[0]["search_work"] == small[1]["search_work"]
    assert full["flops"] <= small[0]["flops"] * (1 + 1e-12)
    with pytest.raises(ValueError):
        tf.einsum_path(eq, *shapes, search_work=-1.0)


def test_einsum_over_semirings():
    # Max-plus matrix product against NumPy written the user's way.
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 5))
    got = tf.einsum("ij,jk->ik", a, b, semiring="max_plus")
    np.testing.assert_array_equal(got.numpy(), np.max(a[:, :, None] + b[None], axis=1))
    got = tf.einsum("ij,jk->ik", a, b, semiring="min_plus")
    np.testing.assert_array_equal(got.numpy(), np.min(a[:, :, None] + b[None], axis=1))
    x, y = RNG.random((3, 4)) < 0.4, RNG.random((4, 2)) < 0.4
    got = tf.einsum("ij,jk->ik", x, y, semiring="or_and")
    np.testing.assert_array_equal(got.numpy(), np.any(x[:, :, None] & y[None], axis=1))
    # Counting: every term of a constant network ties.
    value, count = tf.einsum_count("i,j->", np.ones(2), np.zeros(3))
    assert value.item() == 1.0 and count.item() == 6.0
    # The gradient routes through the winning term.
    t = tf.tensor(a, requires_grad=True)
    tf.einsum("ij,jk->", t, b, semiring="max_plus").backward()
    want = np.zeros_like(a)
    i, j, _ = np.unravel_index(np.argmax(a[:, :, None] + b[None]), (3, 4, 5))
    want[i, j] = 1.0
    np.testing.assert_array_equal(t.grad.numpy(), want)
    with pytest.raises(ValueError):
        tf.einsum("ij,jk->ik", a, b, semiring="max_times")
    with pytest.raises(TypeError):
        tf.einsum("ij,jk->ik", a, b, semiring="or_and")  # or-and needs bool
