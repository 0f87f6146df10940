"""The type stubs: generated from the package (complete by construction) and
accepted by mypy on typical code, which also rejects a wrong call."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import tenferro as tf

PKG = pathlib.Path(tf.__file__).parent

GOOD = '''
import numpy as np
import tenferro as tf

a: tf.Tensor = tf.from_numpy(np.ones((3, 3)))
x = tf.tensor([1.0, 2.0], requires_grad=True)
y = (x * 2.0 + 1.0).sum()
y.backward()
g = x.grad
n: int = a.ndim
u, s, vh = tf.linalg.svd(a, full_matrices=False)
w = tf.einsum("ij,jk->ik", a, a)
p = tf.jit(lambda m: tf.sum(m @ m), tf.Spec(("n", "n")))
out = p(np.eye(2))
f = tf.fft.rfft(a, axis=0)
h = tf.autograd.grad(lambda z: tf.sum(z * z), a)
'''

BAD = '''
import tenferro as tf
tf.linalg.svd(tf.ones((2, 2)), full_matrices=False, gaueg="strict")
'''


def test_stub_files_are_shipped():
    for name in ("__init__.pyi", "linalg.pyi", "fft.pyi", "autograd.pyi", "py.typed"):
        assert (PKG / name).is_file(), name


def test_stubs_are_current(tmp_path):
    gen = pathlib.Path(os.environ.get("TENFERRO_SOURCE_DIR", PKG.parents[2])) / "python" / "tools" / "gen_stubs.py"
    if not gen.is_file():
        pytest.skip("source tree not available")
    subprocess.run([sys.executable, str(gen), str(tmp_path)], check=True)
    for name in ("__init__.pyi", "linalg.pyi", "fft.pyi", "autograd.pyi"):
        assert (tmp_path / name).read_text() == (PKG / name).read_text(), name


@pytest.mark.skipif(shutil.which("mypy") is None, reason="mypy (Debian package mypy) not installed")
def test_mypy_accepts_typical_code_and_rejects_a_wrong_keyword(tmp_path):
    env = dict(os.environ, MYPYPATH=str(PKG.parent))
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--python-executable", sys.executable]
    good = subprocess.run(["mypy", *cache, str(tmp_path / "good.py")], capture_output=True, text=True, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run(["mypy", *cache, str(tmp_path / "bad.py")], capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "gaueg" in bad.stdout, bad.stdout
