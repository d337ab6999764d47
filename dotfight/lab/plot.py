"""Pictures of a lab run: the distributions behind the report's figures (matplotlib, Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dotfight.lab.page import PageRecord


def draw_report(report: dict[str, Any], records: Sequence[PageRecord], path: str | Path) -> None:
    """Writes a PNG of four panels: turns per page, longest turn, lunge share per page, endings and walls."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    cfg = report["config"]
    bots = f"{cfg['bots']['blue']}/{cfg['bots']['red']}" + (" alternating" if cfg["alternate"] else "")
    overrides = ", ".join(f"{k}={v}" for k, v in cfg["overrides"].items())
    fig.suptitle(
        f"Dotfight lab: {report['pages']} pages, {cfg['preset']}, bots {bots}"
        + (f", {overrides}" if overrides else "")
    )
    turns = [r.turns for r in records]
    ax = axes[0][0]
    # Whole-turn bins (a page has a whole number of turns), grouped when the range is wide.
    step = max(1, (max(turns) - min(turns) + 1) // 40)
    ax.hist(turns, bins=range(min(turns), max(turns) + step + 1, step), color="#1f4e9c", align="left")
    ax.axvline(report["turns_per_page"]["median"], color="#c0392b", linestyle="--", label="median")
    ax.set_title("turns per page")
    ax.set_xlabel("turns")
    ax.set_ylabel("pages")
    ax.legend()

    longest = [r.longest_turn_flicks for r in records]
    ax = axes[0][1]
    top = max(longest)
    ax.hist(longest, bins=range(0, top + 2), color="#1f4e9c", align="left")
    ax.set_title("flicks in a page's longest turn")
    ax.set_xlabel("flicks")
    ax.set_ylabel("pages")

    shares = [r.lunges / r.flicks for r in records if r.flicks]
    ax = axes[1][0]
    ax.hist(shares, bins=20, range=(0, 1), color="#1f4e9c")
    ax.set_title("share of lunges per page")
    ax.set_xlabel("lunges / flicks")
    ax.set_ylabel("pages")

    ax = axes[1][1]
    walls = report["inside_vs_outside"]
    names = ["inside a base", "outside"]
    rates = [walls["inside"]["rate"] or 0.0, walls["outside"]["rate"] or 0.0]
    ax.bar(names, rates, color=["#1f4e9c", "#c0392b"])
    ratio = walls["ratio"]
    ax.set_title("crossed out per enemy turn" + (f" (ratio {ratio:.2f})" if ratio is not None else ""))
    ax.set_ylabel("fraction of men")
    ends = report["endings"]
    ax.text(
        0.02,
        0.95,
        "\n".join(f"{k}: {v}" for k, v in ends.items())
        + f"\nblue wins: {report['wins']['blue']}\nred wins: {report['wins']['red']}",
        transform=ax.transAxes,
        ha="left",
        va="top",
        fontsize=8,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
