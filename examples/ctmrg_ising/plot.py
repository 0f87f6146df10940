#!/usr/bin/python3
"""Plots the CTMRG demo's output: magnetisation, free energy, energy and
specific heat against temperature, CTMRG (+ AD through the fixed point)
points over Onsager's exact curves, Tc marked.

Usage: plot.py OUT_DIR CHI PNG   (reads OUT_DIR/ctmrg_ising.csv and
OUT_DIR/ctmrg_ising_exact.csv, written by ctmrg_ising)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "demo_io"))
import ising_plot  # noqa: E402


def main():
    chi, png, ctm, exact = ising_plot.arguments("ctmrg_ising")
    fig, axes = ising_plot.figure(2, 2, (10, 7.5))
    panels = (
        ("m", "magnetisation per site $M$", "CTMRG"),
        ("f", "free energy per site $f$", "CTMRG"),
        ("u", "energy per site $u$", "AD through fixed_point"),
        ("c", "specific heat per site $c$", "AD through fixed_point"),
    )
    for ax, (key, label, how) in zip(axes.flat, panels):
        ising_plot.panel(ax, exact, ctm, key, label, f"{key}_ctmrg", f"{how}, $\\chi$ = {chi}", fontsize=8)
    ising_plot.specific_heat_axis(axes[1][1], ctm["c_ctmrg"])
    ising_plot.save(
        fig, "2D Ising model: CTMRG environment and derivatives through its fixed point (tenferro)", png
    )


if __name__ == "__main__":
    main()
