#!/usr/bin/python3
"""Plots the CTMRG demo's output: magnetisation, free energy, energy and
specific heat against temperature, CTMRG (+ AD through the fixed point)
points over Onsager's exact curves, Tc marked.

Usage: plot.py OUT_DIR CHI PNG   (reads OUT_DIR/ctmrg_ising.csv and
OUT_DIR/ctmrg_ising_exact.csv, written by ctmrg_ising)."""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def main():
    out_dir, chi, png = sys.argv[1], sys.argv[2], sys.argv[3]
    ctm = read(f"{out_dir}/ctmrg_ising.csv")
    exact = read(f"{out_dir}/ctmrg_ising_exact.csv")
    tc = 2.0 / math.log(1.0 + math.sqrt(2.0))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    panels = (
        ("m", "magnetisation per site $M$", "CTMRG"),
        ("f", "free energy per site $f$", "CTMRG"),
        ("u", "energy per site $u$", "AD through fixed_point"),
        ("c", "specific heat per site $c$", "AD through fixed_point"),
    )
    for ax, (key, label, how) in zip(axes.flat, panels):
        ax.plot(exact["T"], exact[f"{key}_exact"], "-", color="0.3", lw=1.2, label="Onsager (exact)")
        ax.plot(ctm["T"], ctm[f"{key}_ctmrg"], "o", color="tab:red", ms=5, label=f"{how}, $\\chi$ = {chi}")
        ax.axvline(tc, color="tab:blue", ls="--", lw=1, label=f"$T_c$ = {tc:.4f}")
        ax.set_xlabel("temperature $T$")
        ax.set_ylabel(label)
        ax.legend(frameon=False, fontsize=8)
    axes[1][1].set_ylim(0, max(max(ctm["c_ctmrg"]), 2.0) * 1.15)
    fig.suptitle("2D Ising model: CTMRG environment and derivatives through its fixed point (tenferro)")
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
