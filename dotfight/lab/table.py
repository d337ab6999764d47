"""The lab's report as a table on the terminal (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def report_table(report: dict[str, Any]) -> Table:
    """A two-column table of the report's figures."""
    cfg = report["config"]
    table = Table(title=f"Dotfight lab — {report['pages']} pages, preset {cfg['preset']}, seed {cfg['seed']}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    bots = cfg["bots"]
    table.add_row(
        "bots (blue / red)", f"{bots['blue']} / {bots['red']}" + (" alternating" if cfg["alternate"] else "")
    )
    table.add_row("rule overrides", ", ".join(f"{k}={v}" for k, v in cfg["overrides"].items()) or "none")
    turns = report["turns_per_page"]
    table.add_row(
        "turns per page (mean / median / p90)",
        f"{_fmt(turns['mean'], 1)} / {_fmt(turns['median'], 1)} / {_fmt(turns['p90'], 1)}",
    )
    longest = report["longest_turn_flicks"]
    table.add_row("flicks in the longest turn (mean / max)", f"{_fmt(longest['mean'], 2)} / {longest['max']}")
    table.add_row("share of flicks that are lunges", _fmt(report["lunge_share"]))
    walls = report["inside_vs_outside"]
    table.add_row("crossed out per enemy turn: inside a base", _fmt(walls["inside"]["rate"], 4))
    table.add_row("crossed out per enemy turn: outside", _fmt(walls["outside"]["rate"], 4))
    table.add_row("inside / outside ratio", _fmt(walls["ratio"]))
    table.add_row("first side (blue) win rate", _fmt(report["first_side_win_rate"]))
    wins = report["wins"]
    table.add_row("wins blue / red / none", f"{wins['blue']} / {wins['red']} / {wins['none']}")
    ends = report["endings"]
    table.add_row(
        "ended: all crossed out / resigned / turn cap",
        f"{ends['all_crossed_out']} / {ends['resigned']} / {ends['turn_cap']}",
    )
    if len(report["by_strength"]) > 1:
        for name, tally in report["by_strength"].items():
            table.add_row(
                f"win rate of {name}", f"{_fmt(tally['win_rate'])} ({tally['wins']}/{tally['pages']})"
            )
    return table


def print_report(report: dict[str, Any], console: Console | None = None) -> None:
    """Prints the report's table."""
    (console or Console()).print(report_table(report))
