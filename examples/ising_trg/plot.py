#!/usr/bin/python3
"""Plots the Ising TRG demo's output: energy and specific heat against
temperature, TRG + AD points over Onsager's exact curves, Tc marked.

Usage: plot.py OUT_DIR CHI PNG   (reads OUT_DIR/ising_trg.csv and
OUT_DIR/ising_trg_exact.csv, written by ising_trg)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "demo_io"))
import ising_plot  # noqa: E402


def main():
    chi, png, trg, exact = ising_plot.arguments("ising_trg")
    fig, (ax_u, ax_c) = ising_plot.figure(1, 2, (10, 4))
    for ax, key, label in ((ax_u, "u", "energy per site $u$"), (ax_c, "c", "specific heat per site $c$")):
        ising_plot.panel(ax, exact, trg, key, label, f"{key}_trg", f"TRG + AD, $\\chi$ = {chi}")
    ising_plot.specific_heat_axis(ax_c, trg["c_trg"])
    ising_plot.save(fig, "2D Ising model: derivatives of ln Z through tensor renormalisation (tenferro)", png)


if __name__ == "__main__":
    main()
