"""The ladder's report as tables on the terminal (rich) and as Markdown (for docs/LAB.md)."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def _score(pair: dict[str, Any]) -> str:
    share = pair["score_a"]
    return f"{share['value']:.2f} [{share['low']:.2f}, {share['high']:.2f}]"


def _rows(report: dict[str, Any]) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    ratings = [
        [
            row["player"],
            f"{row['rating']:+.0f}",
            f"[{row['low']:+.0f}, {row['high']:+.0f}]",
            str(row["pages"]),
        ]
        for row in report["ratings"]
    ]
    steps = [
        [f"{row['lower']} → {row['upper']}", f"{row['elo']:+.0f}", f"[{row['low']:+.0f}, {row['high']:+.0f}]"]
        for row in report["steps"]
    ]
    pairs = [
        [
            f"{pair['a']} vs {pair['b']}",
            f"{pair['wins_a']} / {pair['wins_b']} / {pair['draws']}",
            _score(pair),
            f"{pair['fitted_a']:.2f}",
        ]
        for pair in report["pairs"]
    ]
    return ratings, steps, pairs


RATING_HEAD = ("player", "rating (Elo)", "95 %", "pages")
STEP_HEAD = ("step", "Elo", "95 %")
PAIR_HEAD = ("pair (a vs b)", "a wins / b wins / draws", "a's score [95 % Wilson]", "fitted")


def ladder_tables(report: dict[str, Any]) -> list[Table]:
    """The ratings, the steps between levels and every pair's score, as rich tables."""
    anchor = report["anchor"]
    titles = (f"ratings ({anchor} fixed at 0)", "steps between levels", "pairs")
    tables = []
    for title, head, rows in zip(titles, (RATING_HEAD, STEP_HEAD, PAIR_HEAD), _rows(report), strict=True):
        table = Table(title=title)
        for name in head:
            table.add_column(name, justify="left" if name in ("player", "step", "pair (a vs b)") else "right")
        for row in rows:
            table.add_row(*row)
        tables.append(table)
    return tables


def ladder_markdown(report: dict[str, Any]) -> str:
    """The same three tables in Markdown."""
    parts = []
    for head, rows in zip((RATING_HEAD, STEP_HEAD, PAIR_HEAD), _rows(report), strict=True):
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"
