"""What the Ising demos' plot scripts share: their command line, the two CSV
files a demo writes, and panels of the demo's points over Onsager's exact
curve with Tc marked.

A plot script imports it from this folder:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "demo_io"))
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TC = 2.0 / math.log(1.0 + math.sqrt(2.0))


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def arguments(demo):
    """OUT_DIR CHI PNG from the command line: (chi, png, the demo's points,
    the exact curves), read from OUT_DIR/<demo>.csv and OUT_DIR/<demo>_exact.csv."""
    out_dir, chi, png = sys.argv[1], sys.argv[2], sys.argv[3]
    return chi, png, read(f"{out_dir}/{demo}.csv"), read(f"{out_dir}/{demo}_exact.csv")


def figure(rows, columns, size):
    return plt.subplots(rows, columns, figsize=size)


def panel(ax, exact, points, key, label, points_key, points_label, **legend):
    """The exact curve `<key>_exact` and the points `points_key` against T."""
    ax.plot(exact["T"], exact[f"{key}_exact"], "-", color="0.3", lw=1.2, label="Onsager (exact)")
    ax.plot(points["T"], points[points_key], "o", color="tab:red", ms=5, label=points_label)
    ax.axvline(TC, color="tab:blue", ls="--", lw=1, label=f"$T_c$ = {TC:.4f}")
    ax.set_xlabel("temperature $T$")
    ax.set_ylabel(label)
    ax.legend(frameon=False, **legend)


def specific_heat_axis(ax, values):
    """From 0 to a little above the largest point (at least 2)."""
    ax.set_ylim(0, max(max(values), 2.0) * 1.15)


def save(fig, title, png):
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
