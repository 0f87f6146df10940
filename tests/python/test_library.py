"""Compiled C++ families loaded from Python (tenferro.load_library):
examples/custom_op's two families, built as a family library."""

import os
import pathlib

import numpy as np
import pytest

import tenferro as tf

torch = pytest.importorskip("torch")


def library_path():
    build = pathlib.Path(os.environ.get("TENFERRO_BUILD_DIR", pathlib.Path(tf.__file__).parents[2]))
    p = build / "python" / "examples" / "custom_families.so"
    if not p.is_file():
        pytest.skip(f"{p} not built")
    return p


def test_compiled_families_compute_and_differentiate():
    lib = tf.load_library(library_path())
    assert {"softsquare", "maxplus_matmul"} <= set(dir(lib))
    x0 = np.linspace(-2, 2, 5)
    x = tf.tensor(x0, requires_grad=True)
    y = lib.softsquare(x)
    np.testing.assert_allclose(y.detach().numpy(), np.log1p(x0 ** 2), rtol=1e-14)
    tf.sum(y).backward()   # the family's jvp rule, transposed
    np.testing.assert_allclose(x.grad.numpy(), 2 * x0 / (1 + x0 ** 2), rtol=1e-14)
    # Column-major [m, k] x [k, n]: on Python arrays, maxplus(b, a) is a (x) b.
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    c = lib.maxplus_matmul(b, a)
    np.testing.assert_allclose(c.numpy(), np.max(a[:, :, None] + b[None, :, :], axis=1), rtol=1e-15)


def test_compiled_family_in_a_traced_program():
    lib = tf.load_library(library_path())
    p = tf.jit(lambda z: tf.sum(lib.softsquare(z)), tf.Spec(("n",)))
    x = np.array([0.5, -1.0, 2.0])
    assert abs(p(x).item() - np.sum(np.log1p(x ** 2))) < 1e-14
    np.testing.assert_allclose(p.grad()(x).numpy(), 2 * x / (1 + x ** 2), rtol=1e-14)


def test_load_errors():
    with pytest.raises(ValueError, match="cannot load"):
        tf.load_library("/nonexistent/libnothing.so")
    import ctypes.util
    libm = ctypes.util.find_library("m")
    with pytest.raises(ValueError, match="not a family library"):
        tf.load_library("/lib/x86_64-linux-gnu/" + libm if libm and not libm.startswith("/") else libm)
    lib = tf.load_library(library_path())
    with pytest.raises(ValueError, match="takes no parameters"):
        lib.softsquare(np.ones(2), k=2.0)
