"""Zero-copy exchange with NumPy and torch through DLPack."""

import gc

import numpy as np
import pytest

import tenferro as tf

torch = pytest.importorskip("torch")


def test_torch_to_tenferro_shares_memory():
    t = torch.arange(12.0).reshape(3, 4)
    u = tf.from_dlpack(t)
    assert u.shape == (3, 4)
    assert u.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(u.numpy(), t.numpy())
    t[0, 0] = 42.0
    assert float(u[0, 0]) == 42.0


def test_tenferro_to_torch_shares_memory_with_strides():
    u = tf.arange(12).reshape(3, 4)
    for v in (u, u.T, u[:, ::2], u[::-1]):
        if v.strides and min(v.strides) < 0:
            continue  # torch refuses negative strides
        t = torch.from_dlpack(v)
        assert t.data_ptr() == v.data_ptr()
        assert tuple(t.shape) == v.shape
        np.testing.assert_array_equal(t.numpy(), v.numpy())


def test_round_trip_and_lifetimes():
    t = torch.ones(5, dtype=torch.complex128)
    u = tf.from_dlpack(t)
    del t
    gc.collect()
    assert u.sum().item() == 5
    back = torch.from_dlpack(u)
    del u
    gc.collect()
    assert back.sum().item() == 5
    n = np.arange(4.0)
    w = tf.from_dlpack(n)
    assert np.shares_memory(w.numpy(), n)
    m = np.from_dlpack(tf.arange(3.0))
    np.testing.assert_array_equal(m, [0.0, 1.0, 2.0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64,
                                   torch.complex64, torch.complex128])
def test_dtypes_cross(dtype):
    t = torch.ones(3, dtype=dtype)
    u = tf.from_dlpack(t)
    assert u.dtype.numpy == torch.empty(0, dtype=dtype).numpy().dtype
    assert torch.from_dlpack(u).dtype == dtype


def test_requires_grad_tensors_do_not_export():
    x = tf.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        x.__dlpack__()
    with pytest.raises(RuntimeError):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]
