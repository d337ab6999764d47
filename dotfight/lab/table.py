"""The lab's report as tables on the terminal (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

FIGURE_NAMES = {
    "risk_ratio": "risk ratio: inside / outside a base",
    "walls_length_ratio": "page length: walls / free walls",
    "longest_turn": "flicks in the longest turn (mean)",
    "lunge_share": "share of flicks that are lunges",
    "turns": "turns a page (mean)",
    "rounds": "rounds a page (mean)",
    "first_side_win_rate": "first side (blue) win rate",
    "win_rate_a": "win rate of a",
}


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_figure(figure: dict[str, Any] | None, digits: int = 3) -> str:
    """`value [low, high]`, or a dash when the figure was not measured."""
    if figure is None or figure["value"] is None:
        return "—"
    if figure["low"] is None:
        return _fmt(figure["value"], digits)
    return f"{figure['value']:.{digits}f} [{figure['low']:.{digits}f}, {figure['high']:.{digits}f}]"


def _players(config: dict[str, Any], side: str) -> str:
    policy = config.get("policies", {}).get(side, "full")
    strength: str = config["bots"][side]
    return strength if policy == "full" else f"{strength}+{policy}"


def report_table(report: dict[str, Any]) -> Table:
    """A two-column table of the report's figures (95 % intervals in brackets)."""
    cfg = report["config"]
    table = Table(title=f"Dotfight lab — {report['pages']} pages, preset {cfg['preset']}, seed {cfg['seed']}")
    table.add_column("measure")
    table.add_column("value [95 % interval]", justify="right")
    a, b = _players(cfg, "blue"), _players(cfg, "red")
    table.add_row("bots (blue / red)", f"{a} / {b}" + (" alternating" if cfg["alternate"] else ""))
    table.add_row("rule overrides", ", ".join(f"{k}={v}" for k, v in cfg["overrides"].items()) or "none")
    figures = report["figures"]
    table.add_row(FIGURE_NAMES["risk_ratio"], fmt_figure(figures["risk_ratio"]))
    walls = report["inside_vs_outside"]
    table.add_row(
        "  crossed out per enemy turn: inside / outside",
        f"{_fmt(walls['inside']['rate'], 4)} / {_fmt(walls['outside']['rate'], 4)}",
    )
    table.add_row(FIGURE_NAMES["walls_length_ratio"], fmt_figure(figures["walls_length_ratio"]))
    if report["free_walls"] is not None:
        table.add_row(
            "  turns a page with free walls (mean)", _fmt(report["free_walls"]["turns_per_page"]["mean"], 1)
        )
    longest = report["longest_turn_flicks"]
    table.add_row(
        FIGURE_NAMES["longest_turn"], fmt_figure(figures["longest_turn"], 2) + f", max {longest['max']}"
    )
    table.add_row(FIGURE_NAMES["lunge_share"], fmt_figure(figures["lunge_share"]))
    turns, rounds = report["turns_per_page"], report["rounds_per_page"]
    table.add_row(FIGURE_NAMES["turns"], fmt_figure(figures["turns"], 1))
    table.add_row(
        "  turns: median / p90 / max",
        f"{_fmt(turns['median'], 1)} / {_fmt(turns['p90'], 1)} / {turns['max']:.0f}",
    )
    table.add_row(FIGURE_NAMES["rounds"], fmt_figure(figures["rounds"], 1) + f", max {rounds['max']:.0f}")
    for side, mix in report["flick_mix"].items():
        table.add_row(
            f"flick mix, {side}: snipes / lunges / chain links / sends",
            f"{mix['snipes']} / {mix['lunges']} / {mix['chain_lunges']} / {mix['sends']}",
        )
        table.add_row(
            f"  {side}: two with one bullet / kills by snipe, by lunge / lungers lost",
            f"{mix['two_with_one_bullet']} / {mix['snipe_kills']}, {mix['lunge_kills']}"
            f" / {mix['lungers_lost']}",
        )
    table.add_row(FIGURE_NAMES["first_side_win_rate"], fmt_figure(figures["first_side_win_rate"]))
    wins = report["wins"]
    table.add_row("wins blue / red / none", f"{wins['blue']} / {wins['red']} / {wins['none']}")
    ends = report["endings"]
    table.add_row(
        "ended: all crossed out / resigned / turn cap / setup cap",
        f"{ends['all_crossed_out']} / {ends['resigned']} / {ends['turn_cap']} / {ends['setup_cap']}",
    )
    blows = report["final_blow"]
    table.add_row(
        "final blow: snipe / lunge / shot / off the page",
        f"{blows['snipe']} / {blows['lunge']} / {blows['shot']} / {blows['off_page']}",
    )
    duel = report["head_to_head"]
    if duel["a"] != duel["b"]:
        table.add_row(
            f"head to head: {duel['a']} (a) vs {duel['b']} (b), win rate of a",
            fmt_figure(duel["win_rate_a"]) + f" ({duel['wins']['a']}/{duel['decided']})",
        )
        for who in ("a", "b"):
            table.add_row(f"  lunge share of {duel[who]}", _fmt(duel["flick_mix"][who]["lunge_share"]))
    return table


SHORT_NAMES = {
    "risk_ratio": "risk ratio",
    "walls_length_ratio": "walls / free",
    "longest_turn": "longest turn",
    "lunge_share": "lunge share",
    "turns": "turns",
    "first_side_win_rate": "blue wins",
    "win_rate_a": "a wins",
}


def sweep_table(summary: dict[str, Any]) -> Table:
    """One row per finished point of a sweep, one column per figure: the value over its 95 % interval."""
    sweep = summary["sweep"]
    names = [p["name"] for p in sweep["params"]]
    table = Table(title=f"Dotfight lab sweep — {sweep['preset']}, {sweep['games']} pages a point")
    for name in names:
        table.add_column(name, justify="right", overflow="fold")
    duel = (
        sweep["bots"]["blue"] != sweep["bots"]["red"] or sweep["policies"]["blue"] != sweep["policies"]["red"]
    )
    shown = [f for f in SHORT_NAMES if f != ("first_side_win_rate" if duel else "win_rate_a")]
    for name in shown:
        table.add_column(SHORT_NAMES[name], justify="right")
    digits = {"turns": 1, "longest_turn": 2}
    for point in summary["points"]:
        cells = []
        for f in shown:
            figure = point["figures"][f]
            d = digits.get(f, 2)
            if figure is None or figure["value"] is None:
                cells.append("—")
            elif figure["low"] is None:
                cells.append(f"{figure['value']:.{d}f}")
            else:
                cells.append(f"{figure['value']:.{d}f}\n[{figure['low']:.{d}f}, {figure['high']:.{d}f}]")
        table.add_row(*(f"{point['params'][n]:g}" for n in names), *cells)
    return table


def print_report(report: dict[str, Any], console: Console | None = None) -> None:
    """Prints the report's table."""
    (console or Console()).print(report_table(report))
