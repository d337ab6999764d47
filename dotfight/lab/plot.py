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


# The sweep plot's panels: (figure, title); the last panel is a win rate (see `draw_sweep`).
SWEEP_PANELS = (
    ("risk_ratio", "risk ratio: inside / outside"),
    ("walls_length_ratio", "page length: walls / free walls"),
    ("longest_turn", "flicks in the longest turn (mean)"),
    ("lunge_share", "share of flicks that are lunges"),
    ("turns", "turns a page"),
)


# Why a sweep's panel can be empty, for the figures that are measured only on request.
NOT_MEASURED = {"walls_length_ratio": "not measured:\nthis sweep played no\nfree-walls twins (--no-twins)"}


def _has_value(point: dict[str, Any], name: str) -> bool:
    value = point["figures"].get(name)
    return value is not None and value["value"] is not None


def _not_measured(ax: Any, title: str, x_name: str, xs: list[float], why: str) -> None:
    """Draws an empty panel over the sweep's range with the reason it is empty."""
    if xs and min(xs) != max(xs):
        ax.set_xlim(min(xs), max(xs))
    ax.set_yticks([])
    ax.text(0.5, 0.5, why, transform=ax.transAxes, ha="center", va="center", fontsize=9, wrap=True)
    ax.set_title(title)
    ax.set_xlabel(x_name)


def draw_sweep(summary: dict[str, Any], path: str | Path) -> None:
    """Writes a PNG with one panel per figure: each point's value, its 95 % interval as a band, and
    the book's value ±20 % as a grey band where the book gives one. A grid of two parameters draws one
    line per value of the second."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dotfight.lab.book import book_value, target_band

    sweep = summary["sweep"]
    params = sweep["params"]
    x_name = params[0]["name"]
    line_name = params[1]["name"] if len(params) > 1 else None
    points = summary["points"]
    players = f"{sweep['bots']['blue']}/{sweep['bots']['red']}"
    policies = sweep.get("policies", {})
    if any(p != "full" for p in policies.values()):
        players = f"{sweep['bots']['blue']}+{policies['blue']} vs {sweep['bots']['red']}+{policies['red']}"
    head_to_head = (
        any(p != "full" for p in policies.values()) or sweep["bots"]["blue"] != sweep["bots"]["red"]
    )
    win = (
        ("win_rate_a", "win rate of blue's settings (a)")
        if head_to_head
        else (
            "first_side_win_rate",
            "first side (blue) win rate",
        )
    )
    panels = (*SWEEP_PANELS, win)
    fig, axes = plt.subplots(2, 3, figsize=(14, 8))
    fixed = ", ".join(f"{k}={v}" for k, v in sweep["overrides"].items())
    fig.suptitle(
        f"Dotfight lab sweep: {sweep['preset']}, {sweep['games']} pages a point, bots {players}, "
        f"seed {sweep['seed']}" + (f", {fixed}" if fixed else "")
    )
    groups: dict[Any, list[dict[str, Any]]] = {}
    for point in points:
        groups.setdefault(point["params"].get(line_name) if line_name else None, []).append(point)
    all_xs = [point["params"][x_name] for point in points]
    for ax, (name, title) in zip(axes.flat, panels, strict=True):
        if not any(_has_value(point, name) for point in points):
            # An empty panel would draw a meaningless axis: say why it is empty instead.
            _not_measured(ax, title, x_name, all_xs, NOT_MEASURED.get(name, "no values in this sweep"))
            continue
        band = target_band(name, sweep["preset"])
        if band is not None:
            ax.axhspan(*band, color="#cccccc", alpha=0.5, label="book ±20 %")
            ax.axhline(book_value(name, sweep["preset"]), color="#888888", linewidth=0.8)
        for n, (group, members) in enumerate(sorted(groups.items(), key=lambda g: (g[0] is None, g[0]))):
            members = sorted(members, key=lambda p: p["params"][x_name])
            xs, ys, lows, highs = [], [], [], []
            for point in members:
                value = point["figures"][name]
                if value is None or value["value"] is None:
                    continue
                xs.append(point["params"][x_name])
                ys.append(value["value"])
                lows.append(value["low"] if value["low"] is not None else value["value"])
                highs.append(value["high"] if value["high"] is not None else value["value"])
            colour = f"C{n % 10}"
            label = f"{line_name}={group:g}" if line_name else None
            ax.plot(xs, ys, marker="o", color=colour, label=label)
            ax.fill_between(xs, lows, highs, color=colour, alpha=0.2, linewidth=0)
        ax.set_title(title)
        ax.set_xlabel(x_name)
        if line_name or band is not None:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# The even steps: each level this many Elo above the one below (the ladder plot's grey band).
STEP_BAND = (150.0, 300.0)


def draw_ladder(report: dict[str, Any], path: str | Path) -> None:
    """Writes a PNG of two panels: every player's rating with its 95 % interval (the anchor at 0), and
    each step between consecutive levels with its interval against the even-steps band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ladder = report["ladder"]
    rows = sorted(report["ratings"], key=lambda row: row["rating"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [3, 2]})
    fig.suptitle(
        f"Dotfight ladder: {ladder['preset']}, {ladder['games']} pages a pair, seed {ladder['seed']}, "
        f"{len(ladder['pairs'])} pairs, {report['anchor']} fixed at 0"
    )
    ys = range(len(rows))
    ratings = [row["rating"] for row in rows]
    errors = [[row["rating"] - row["low"] for row in rows], [row["high"] - row["rating"] for row in rows]]
    left.errorbar(ratings, ys, xerr=errors, fmt="o", color="#1f4e9c", capsize=4)
    left.axvline(0.0, color="#888888", linewidth=0.8)
    left.set_yticks(list(ys), [row["player"] for row in rows])
    for y, row in zip(ys, rows, strict=True):
        left.annotate(f"{row['rating']:+.0f}", (row["rating"], y), textcoords="offset points", xytext=(0, 7))
    left.set_xlabel("rating (Elo), 95 % interval")
    left.set_title("ratings")

    steps = report["steps"]
    right.axhspan(*STEP_BAND, color="#cccccc", alpha=0.5, label="even steps: 150–300")
    xs = range(len(steps))
    elos = [step["elo"] for step in steps]
    bars = [[step["elo"] - step["low"] for step in steps], [step["high"] - step["elo"] for step in steps]]
    right.errorbar(list(xs), elos, yerr=bars, fmt="o", color="#c0392b", capsize=4)
    right.set_xticks(list(xs), [f"{s['lower']}\n→ {s['upper']}" for s in steps], fontsize=8)
    right.set_ylabel("Elo above the level below")
    right.set_title("steps")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
