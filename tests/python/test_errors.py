"""C++ error kinds arrive as a Python hierarchy with the same messages."""

import numpy as np
import pytest

import tenferro as tf


def test_hierarchy():
    assert issubclass(tf.errors.ShapeMismatch, tf.Error)
    assert issubclass(tf.errors.ShapeMismatch, ValueError)
    assert issubclass(tf.errors.DTypeMismatch, TypeError)
    assert issubclass(tf.errors.Unsupported, NotImplementedError)
    assert issubclass(tf.errors.OutOfMemory, MemoryError)
    assert issubclass(tf.errors.AxisOutOfBounds, IndexError)
    assert issubclass(tf.errors.Singular, tf.errors.NumericalError)


def test_shape_mismatch_carries_kind_and_message():
    with pytest.raises(tf.errors.ShapeMismatch) as e:
        tf.ones(3) + tf.ones(4)
    assert e.value.kind == "ShapeMismatch"
    assert str(e.value).startswith("[")
    assert e.value.phase in ("build", "compile", "execute")


def test_singular_matrix():
    with pytest.raises(tf.errors.Singular) as e:
        tf.linalg.inv(np.zeros((3, 3)))
    assert "inv" in str(e.value)
    assert e.value.phase == "execute"


def test_dtype_and_argument_errors():
    with pytest.raises(TypeError):
        tf.tensor(["a", "b"])
    with pytest.raises(TypeError):
        tf.sin(tf.ones(2, dtype=tf.bool_)) if False else tf.neg(tf.ones(2, dtype=tf.bool_))
    with pytest.raises(ValueError):
        tf.reshape(tf.ones(6), (4, 2))
    with pytest.raises(ValueError):
        tf.linalg.svd(np.ones((2, 2)), gauge="bogus")
    with pytest.raises(ValueError):
        tf.linalg.inv(np.ones(3))
    with pytest.raises(ValueError):
        bool(tf.ones(3))
    with pytest.raises(ValueError):
        tf.ones(2).backward()
    with pytest.raises(RuntimeError):
        tf.ones(1).backward()


def test_errors_leave_the_runtime_usable():
    for _ in range(3):
        with pytest.raises(tf.Error):
            tf.matmul(tf.ones((2, 3)), tf.ones((2, 3)))
    assert (tf.ones((2, 3)) @ tf.ones((3, 2))).tolist() == [[3.0, 3.0], [3.0, 3.0]]
