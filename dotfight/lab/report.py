"""Turns page records into the lab's report: one plain-JSON dict, the same for the same records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from dotfight.lab.config import LabConfig
from dotfight.lab.page import PageRecord

ENDINGS = ("all_crossed_out", "resigned", "turn_cap")


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _stats(values: Sequence[int]) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    return {
        "mean": round(float(arr.mean()), 4),
        "median": round(float(np.median(arr)), 4),
        "p90": round(float(np.percentile(arr, 90)), 4),
        "max": float(arr.max()),
    }


def build_report(config: LabConfig, records: Sequence[PageRecord]) -> dict[str, Any]:
    """The report of a run: page length, flicks, lunges, walls' worth, who won and how pages ended."""
    records = sorted(records, key=lambda r: r.index)
    flicks = sum(r.flicks for r in records)
    lunges = sum(r.lunges for r in records)
    inside_men = sum(r.inside_men for r in records)
    inside_crossed = sum(r.inside_crossed for r in records)
    outside_men = sum(r.outside_men for r in records)
    outside_crossed = sum(r.outside_crossed for r in records)
    inside_rate = _share(inside_crossed, inside_men)
    outside_rate = _share(outside_crossed, outside_men)
    ratio = inside_rate / outside_rate if inside_rate is not None and outside_rate else None
    endings = Counter(r.end for r in records)
    winners = Counter(r.winner or "none" for r in records)
    decided = winners["blue"] + winners["red"]
    by_strength: dict[str, dict[str, int]] = {}
    for r in records:
        for side, strength in (("blue", r.blue), ("red", r.red)):
            tally = by_strength.setdefault(strength, {"pages": 0, "wins": 0})
            tally["pages"] += 1
            tally["wins"] += r.winner == side
    longest = [r.longest_turn_flicks for r in records]
    return {
        "config": config.to_json(),
        "rules": config.rules().to_json(),
        "pages": len(records),
        "turns_per_page": _stats([r.turns for r in records]),
        "longest_turn_flicks": {"mean": round(float(np.mean(longest)), 4), "max": int(max(longest))},
        "flicks": flicks,
        "lunge_share": _round(_share(lunges, flicks)),
        "inside_vs_outside": {
            "inside": {"men_turns": inside_men, "crossed_out": inside_crossed, "rate": _round(inside_rate)},
            "outside": {
                "men_turns": outside_men,
                "crossed_out": outside_crossed,
                "rate": _round(outside_rate),
            },
            "ratio": _round(ratio),
        },
        "first_side_win_rate": _round(_share(winners["blue"], decided)),
        "wins": {"blue": winners["blue"], "red": winners["red"], "none": winners["none"]},
        "endings": {name: endings[name] for name in ENDINGS},
        "by_strength": {
            name: {**t, "win_rate": _round(_share(t["wins"], t["pages"]))}
            for name, t in sorted(by_strength.items())
        },
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
