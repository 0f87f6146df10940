"""Concurrency from Python threads and flat memory over many ops."""

import resource
import threading

import numpy as np

import tenferro as tf


def test_eight_python_threads_at_once():
    errors = []
    results = [None] * 8

    def work(k):
        try:
            rng = np.random.default_rng(k)
            a = rng.normal(size=(40, 40)) + 40 * np.eye(40)
            acc = 0.0
            for _ in range(30):
                x = tf.tensor(a, requires_grad=True)
                loss = tf.sum(tf.linalg.inv(x) @ x) + tf.sum(tf.tanh(x))
                loss.backward()
                acc += float(tf.sum(x.grad))
            results[k] = acc
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # Each thread's result equals a serial rerun of the same work.
    for k in (0, 5):
        rng = np.random.default_rng(k)
        a = rng.normal(size=(40, 40)) + 40 * np.eye(40)
        acc = 0.0
        for _ in range(30):
            x = tf.tensor(a, requires_grad=True)
            (tf.sum(tf.linalg.inv(x) @ x) + tf.sum(tf.tanh(x))).backward()
            acc += float(tf.sum(x.grad))
        assert abs(acc - results[k]) <= 1e-9 * abs(acc)


def _rss_kb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() // 1024


def test_no_leaks_over_many_ops():
    a = np.ones((8, 8))
    x = tf.from_numpy(a)

    def burst(n):
        for _ in range(n):
            y = (x + 1.0) * x
            y = y.numpy()
            w = tf.tensor([1.0, 2.0], requires_grad=True)
            (w * w).sum().backward()

    burst(20000)  # warm the caches and pools
    before = _rss_kb()
    burst(100000)
    after = _rss_kb()
    assert after - before < 20 * 1024, f"RSS grew by {after - before} kB over 10^5 iterations"
