#!/usr/bin/python3
"""Reference iteration counts for tests/optim/optim_test.cpp (Lbfgs.RosenbrockIterationCountsMatchTorch):
torch.optim.LBFGS on the Rosenbrock function. Run with Debian's python3-torch."""
import torch
torch.set_default_dtype(torch.float64)
def rosen(x): return (1 - x[0])**2 + 100 * (x[1] - x[0]**2)**2
for ls in ("strong_wolfe", None):
  for x0 in ((-1.5, 2.0), (-1.2, 1.0)):
    x = torch.tensor(x0, requires_grad=True)
    opt = torch.optim.LBFGS([x], lr=1, max_iter=200, max_eval=400, history_size=10, line_search_fn=ls, tolerance_grad=1e-10, tolerance_change=1e-14)
    def closure():
        opt.zero_grad(); l = rosen(x); l.backward(); return l
    opt.step(closure)
    st = opt.state[opt._params[0]]
    print(ls, x0, "n_iter", st["n_iter"], "func_evals", st["func_evals"], "x", x.tolist(), "f", rosen(x).item())
