"""Ctrl-C during a long loop of tenferro work returns control promptly."""

import os
import signal
import subprocess
import sys
import time

SCRIPT = r"""
import sys, numpy as np, tenferro as tf
a = tf.from_numpy(np.random.default_rng(0).normal(size=(300, 300)))
print("ready", flush=True)
try:
    while True:
        a = tf.tanh(a @ a.T / 300.0) + tf.linalg.inv(a @ a.T + 300.0 * tf.eye(300))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
"""


def test_sigint_interrupts_a_loop_of_ops():
    env = dict(os.environ)
    p = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=60)  # a hang guard, not a timing check
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 3, p.stderr.read()
    assert "interrupted" in p.stdout.read()
