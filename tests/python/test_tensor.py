"""Tensors with NumPy semantics: memory sharing, views, indexing, reshape."""

import gc

import numpy as np
import pytest

import tenferro as tf


def test_from_numpy_shares_memory_for_any_strides():
    base = np.arange(24.0).reshape(4, 6)
    for a in (base, np.asfortranarray(base), base[1:, ::2], base[::-1, ::-3], base.T):
        t = tf.from_numpy(a)
        assert t.shape == a.shape
        assert t.strides == a.strides
        assert np.shares_memory(t.numpy(), a)
        np.testing.assert_array_equal(t.numpy(), a)
        np.testing.assert_array_equal(np.asarray(t), a)


def test_numpy_view_outlives_tensor_and_tensor_outlives_array():
    t = tf.arange(6.0)
    v = t.numpy()
    del t
    gc.collect()
    np.testing.assert_array_equal(v, np.arange(6.0))
    a = np.arange(5.0)
    u = tf.from_numpy(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(u.numpy(), np.arange(5.0))


def test_writes_through_shared_memory():
    a = np.zeros(3)
    t = tf.from_numpy(a)
    t[1] = 5.0
    assert a[1] == 5.0
    t += 1
    np.testing.assert_array_equal(a, [1.0, 6.0, 1.0])


def test_results_are_c_contiguous():
    a = tf.ones((3, 4)) + tf.ones((3, 4))
    assert a.numpy().flags["C_CONTIGUOUS"]
    assert a.is_contiguous()


@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape_orders_match_numpy(order):
    a = np.arange(24).reshape(2, 3, 4)
    t = tf.from_numpy(a)
    for shape in [(4, 6), (24,), (2, 12), (3, 2, 4), (-1, 4)]:
        np.testing.assert_array_equal(t.reshape(shape, order=order).numpy(),
                                      a.reshape(shape, order=order))


def test_reshape_is_a_view_when_possible():
    a = np.arange(12.0)
    t = tf.from_numpy(a).reshape(3, 4)
    assert np.shares_memory(t.numpy(), a)


def test_basic_indexing_matches_numpy():
    a = np.arange(60).reshape(3, 4, 5)
    t = tf.from_numpy(a)
    keys = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 1), (slice(1, None), None, 3),
            (slice(None, None, -1),), (slice(None), slice(3, 0, -2)), (0, Ellipsis, slice(1, 4)),
            (Ellipsis,), (1, 2, 3)]
    for k in keys:
        np.testing.assert_array_equal(np.asarray(t[k]), a[k])
    assert np.shares_memory(t[1:, ::2].numpy(), a)


def test_advanced_indexing_matches_numpy():
    a = np.arange(20).reshape(4, 5)
    t = tf.from_numpy(a)
    np.testing.assert_array_equal(t[t > 7].numpy(), a[a > 7])
    np.testing.assert_array_equal(t[[0, 3, -1]].numpy(), a[[0, 3, -1]])
    np.testing.assert_array_equal(t[:, [4, 0]].numpy(), a[:, [4, 0]])
    np.testing.assert_array_equal(t[[0, 1], [2, 3]].numpy(), a[[0, 1], [2, 3]])
    np.testing.assert_array_equal(t[np.array([[0, 1], [2, 3]])].numpy(), a[np.array([[0, 1], [2, 3]])])


def test_index_errors_are_index_errors():
    t = tf.zeros((2, 3))
    with pytest.raises(IndexError):
        t[5]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises(tf.errors.AxisOutOfBounds):
        tf.sum(t, axis=2)


def test_metadata_and_conversions():
    t = tf.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.ndim == 2 and t.size == 4 and t.dtype == tf.float64
    assert t.T.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert t.mT.shape == (2, 2)
    assert t[0, 1].item() == 2.0 and isinstance(t[0, 1].item(), float)
    assert float(t[1, 1]) == 4.0 and int(tf.tensor(7)) == 7
    z = tf.tensor([1 + 2j, 3 - 1j])
    assert z.dtype == tf.complex128
    np.testing.assert_array_equal(z.real.numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(z.imag.numpy(), [2.0, -1.0])
    np.testing.assert_array_equal(z.conj().numpy(), [1 - 2j, 3 + 1j])
    assert "tensor(" in repr(t) and "complex" not in repr(t)
    assert "complex64" in repr(tf.ones(2, dtype=tf.complex64))
    assert len(t) == 2


def test_dtypes_accept_numpy_and_python_types():
    assert tf.zeros(2, dtype=np.float32).dtype == tf.float32
    assert tf.zeros(2, dtype=float).dtype == tf.float64
    assert tf.zeros(2, dtype="complex64").dtype == tf.complex64
    assert tf.as_dtype(np.int32) == tf.int32
    assert tf.float32.numpy == np.float32
    with pytest.raises(TypeError):
        tf.zeros(2, dtype=np.uint8)
    with pytest.raises(TypeError):
        tf.from_numpy(np.zeros(2, dtype=np.float16))


def test_arange_linspace_eye_full():
    assert tf.arange(5).dtype == tf.int64
    np.testing.assert_array_equal(tf.arange(1, 7, 2).numpy(), np.arange(1, 7, 2))
    np.testing.assert_allclose(tf.arange(0.0, 1.0, 0.25).numpy(), np.arange(0.0, 1.0, 0.25))
    np.testing.assert_allclose(tf.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(tf.eye(2, 3).numpy(), np.eye(2, 3))
    assert tf.full((2, 2), 3).dtype == tf.int64
    assert tf.full((2,), 2.5).tolist() == [2.5, 2.5]


def test_random_generators_are_seeded():
    a = tf.random.default_rng(3).standard_normal((4, 3))
    b = tf.random.default_rng(3).standard_normal((4, 3))
    c = tf.random.default_rng(4).standard_normal((4, 3))
    assert a.shape == (4, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    u = tf.Generator(1).random(1000)
    assert 0.0 <= float(tf.min(u)) and float(tf.max(u)) < 1.0


def test_npy_round_trip(tmp_path):
    t = tf.arange(6.0).reshape(2, 3)
    tf.save(tmp_path / "a.npy", t)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), t.numpy())
    np.testing.assert_array_equal(tf.load(tmp_path / "a.npy").numpy(), t.numpy())
    tf.savez(tmp_path / "b.npz", x=t, y=tf.ones(2))
    d = tf.load(tmp_path / "b.npz")
    assert set(d) == {"x", "y"} and d["x"].shape == (2, 3)


def test_pickle_deepcopy_and_format():
    import copy
    import pickle
    t = tf.arange(6.0).reshape(2, 3)
    u = pickle.loads(pickle.dumps(t))
    assert u.tolist() == t.tolist() and u.dtype == t.dtype
    assert not np.shares_memory(u.numpy(), t.numpy())
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    y = copy.deepcopy(x)
    assert y.requires_grad and y.tolist() == [1.0, 2.0]
    assert f"{tf.tensor(3.14159):.2f}" == "3.14"
    assert f"{t}".startswith("tensor(")


def test_operator_results_are_ordinary_tensors():
    # The operators' results hold their tensor inside the Python object
    # (python/src/tensor_object.cpp): they must behave as any other tenferro.Tensor.
    import copy
    import pickle
    import sys
    import weakref
    x, y = tf.tensor([1.0, 2.0, 3.0]), tf.tensor([4.0, 5.0, 6.0])
    refs = sys.getrefcount(tf.Tensor)
    for _ in range(1000):
        r = x + y
        del r
    after = sys.getrefcount(tf.Tensor)
    assert after == refs  # each result lets go of its type
    r = x * y - x / y
    assert type(r) is tf.Tensor and r.shape == (3,) and r.dtype == tf.float64
    np.testing.assert_array_equal(r.numpy(), [1.0 * 4 - 1 / 4, 10 - 2 / 5, 18 - 3 / 6])
    # A NumPy view outlives the result; the result's memory stays valid.
    v = (x + y).numpy()
    gc.collect()
    np.testing.assert_array_equal(v, [5.0, 7.0, 9.0])
    # Weak references, pickling, copies and in-place marking.
    w = weakref.ref(r)
    assert w() is r
    assert pickle.loads(pickle.dumps(r)).tolist() == r.tolist()
    assert copy.deepcopy(r).tolist() == r.tolist()
    del r
    gc.collect()
    assert w() is None
    s = x + y
    assert s.requires_grad_() is s and s.requires_grad
    (s * s).sum().backward()
    np.testing.assert_array_equal(s.grad.numpy(), [10.0, 14.0, 18.0])
    assert s.requires_grad_(False) is s and not s.requires_grad
    assert (-(x + y)).tolist() == [-5.0, -7.0, -9.0]


def test_operator_results_die_cleanly_while_an_exception_propagates():
    x = tf.from_numpy(np.arange(3.0))

    def fails():
        r = x + x  # noqa: F841  (freed while the error below is pending)
        s = -x  # noqa: F841
        raise KeyError("the original error")

    for _ in range(3):
        with pytest.raises(KeyError, match="the original error"):
            fails()
    assert (x * 2.0).tolist() == [0.0, 2.0, 4.0]
