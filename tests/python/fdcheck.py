"""Central finite differences for the gradient tests."""

import numpy as np


def fd_grad(f, x, eps=1e-6):
    """The gradient of the scalar function f at x by central differences."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g
