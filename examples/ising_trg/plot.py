#!/usr/bin/python3
"""Plots the Ising TRG demo's output: energy and specific heat against
temperature, TRG + AD points over Onsager's exact curves, Tc marked.

Usage: plot.py OUT_DIR CHI PNG   (reads OUT_DIR/ising_trg.csv and
OUT_DIR/ising_trg_exact.csv, written by ising_trg)."""
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
    trg = read(f"{out_dir}/ising_trg.csv")
    exact = read(f"{out_dir}/ising_trg_exact.csv")
    tc = 2.0 / math.log(1.0 + math.sqrt(2.0))
    fig, (ax_u, ax_c) = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, label in ((ax_u, "u", "energy per site $u$"), (ax_c, "c", "specific heat per site $c$")):
        ax.plot(exact["T"], exact[f"{key}_exact"], "-", color="0.3", lw=1.2, label="Onsager (exact)")
        ax.plot(trg["T"], trg[f"{key}_trg"], "o", color="tab:red", ms=5, label=f"TRG + AD, $\\chi$ = {chi}")
        ax.axvline(tc, color="tab:blue", ls="--", lw=1, label=f"$T_c$ = {tc:.4f}")
        ax.set_xlabel("temperature $T$")
        ax.set_ylabel(label)
        ax.legend(frameon=False)
    ax_c.set_ylim(0, max(max(trg["c_trg"]), 2.0) * 1.15)
    fig.suptitle("2D Ising model: derivatives of ln Z through tensor renormalisation (tenferro)")
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
