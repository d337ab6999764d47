"""Turns page records into the lab's report: one plain-JSON dict, the same for the same records.

The keys are stable and documented in docs/LAB.md ("The report"); `figures` holds the book's table, each
figure with its 95 % interval (`dotfight.lab.stats`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from dotfight.bot.luck import derive_seed
from dotfight.lab.config import LabConfig
from dotfight.lab.page import MIX_KEYS, SIDES, PageRecord
from dotfight.lab.stats import Bootstrap, Columns, _divide, wilson

ENDINGS = ("all_crossed_out", "resigned", "turn_cap", "setup_cap")
FINAL_BLOWS = ("snipe", "lunge", "shot", "off_page")
# The figures of the book's table, in the order the table and the sweep plot show them.
FIGURES = (
    "risk_ratio",
    "walls_length_ratio",
    "longest_turn",
    "lunge_share",
    "turns",
    "rounds",
    "first_side_win_rate",
    "win_rate_a",
)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _stats(values: Sequence[int]) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    return {
        "mean": round(float(arr.mean()), 4),
        "median": round(float(np.median(arr)), 4),
        "p90": round(float(np.percentile(arr, 90)), 4),
        "max": float(arr.max()),
    }


def _risk_ratio(c: Columns) -> Any:
    inside = _divide(c["inside_crossed"].sum(axis=-1), c["inside_men"].sum(axis=-1))
    outside = _divide(c["outside_crossed"].sum(axis=-1), c["outside_men"].sum(axis=-1))
    return _divide(inside, outside)


def _length_ratio(c: Columns) -> Any:
    return _divide(c["turns"].mean(axis=-1), c["twin_turns"].mean(axis=-1))


def _columns(records: Sequence[PageRecord], twins: Sequence[PageRecord] | None) -> Columns:
    def col(name: str, rows: Sequence[PageRecord] = records) -> np.ndarray[Any, np.dtype[np.float64]]:
        return np.asarray([getattr(r, name) for r in rows], dtype=np.float64)

    cols = {
        name: col(name)
        for name in ("turns", "inside_men", "inside_crossed", "outside_men", "outside_crossed", "flicks")
    }
    cols["lunges"] = col("lunges")
    if twins is not None:
        cols["twin_turns"] = col("turns", twins)
    return cols


def _flick_mix(records: Sequence[PageRecord], side_of: Any) -> dict[str, dict[str, Any]]:
    """Summed per-side counters; `side_of(record, side)` names the bucket a side's counters go to."""
    mix: dict[str, dict[str, Any]] = {}
    for r in records:
        for side in SIDES:
            bucket = mix.setdefault(side_of(r, side), dict.fromkeys(MIX_KEYS, 0))
            for key in MIX_KEYS:
                bucket[key] += r.mix[side][key]
    for bucket in mix.values():
        flicks = bucket["snipes"] + bucket["lunges"] + bucket["chain_lunges"]
        bucket["flicks"] = flicks
        bucket["lunge_share"] = _round(_share(bucket["lunges"] + bucket["chain_lunges"], flicks))
    return dict(sorted(mix.items()))


def build_report(
    config: LabConfig, records: Sequence[PageRecord], twins: Sequence[PageRecord] | None = None
) -> dict[str, Any]:
    """The report of a run: page length, flicks, lunges, walls' worth, who won and how pages ended.

    `twins` are the same pages played with walls that cost nothing (`config.twin()`); without them the
    walls/free-walls length ratio is `None`.
    """
    records = sorted(records, key=lambda r: r.index)
    if twins is not None:
        twins = sorted(twins, key=lambda r: r.index)
        if [r.index for r in twins] != [r.index for r in records]:
            raise ValueError("the twin pages must be the same pages as the run's")
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
    blows = Counter(r.final_blow for r in records)
    winners = Counter(r.winner or "none" for r in records)
    decided = winners["blue"] + winners["red"]
    by_strength: dict[str, dict[str, int]] = {}
    for r in records:
        for side, strength in zip(SIDES, config.strengths(r.index), strict=True):
            tally = by_strength.setdefault(strength, {"pages": 0, "wins": 0})
            tally["pages"] += 1
            tally["wins"] += r.winner == side
    longest = [r.longest_turn_flicks for r in records]
    boot = Bootstrap(len(records), derive_seed("lab-bootstrap", config.seed))
    cols = _columns(records, twins)
    a_wins = sum(1 for r in records if r.winner is not None and r.winner == config.side_of_a(r.index))
    figures = {
        "risk_ratio": boot.statistic(cols, _risk_ratio),
        "walls_length_ratio": boot.statistic(cols, _length_ratio) if twins is not None else None,
        "longest_turn": boot.mean(longest),
        "lunge_share": boot.ratio(cols["lunges"], cols["flicks"]),
        "turns": boot.mean(cols["turns"]),
        "rounds": boot.mean([r.rounds for r in records]),
        "first_side_win_rate": wilson(winners["blue"], decided),
        "win_rate_a": wilson(a_wins, decided),
    }
    players = (config.player_a, config.player_b)
    return {
        "config": config.to_json(),
        "rules": config.rules().to_json(),
        "pages": len(records),
        "figures": figures,
        "turns_per_page": _stats([r.turns for r in records]),
        "rounds_per_page": _stats([r.rounds for r in records]),
        "longest_turn_flicks": {"mean": round(float(np.mean(longest)), 4), "max": int(max(longest))},
        "flicks": flicks,
        "lunge_share": _round(_share(lunges, flicks)),
        "flick_mix": _flick_mix(records, lambda r, side: side),
        "inside_vs_outside": {
            "inside": {"men_turns": inside_men, "crossed_out": inside_crossed, "rate": _round(inside_rate)},
            "outside": {
                "men_turns": outside_men,
                "crossed_out": outside_crossed,
                "rate": _round(outside_rate),
            },
            "ratio": _round(ratio),
        },
        "free_walls": None
        if twins is None
        else {
            "turns_per_page": _stats([r.turns for r in twins]),
            "endings": {name: sum(r.end == name for r in twins) for name in ENDINGS},
        },
        "first_side_win_rate": _round(_share(winners["blue"], decided)),
        "wins": {"blue": winners["blue"], "red": winners["red"], "none": winners["none"]},
        "endings": {name: endings[name] for name in ENDINGS},
        "final_blow": {name: blows[name] for name in FINAL_BLOWS},
        "by_strength": {
            name: {**t, "win_rate": _round(_share(t["wins"], t["pages"]))}
            for name, t in sorted(by_strength.items())
        },
        "head_to_head": {
            "a": players[0],
            "b": players[1],
            "pages": len(records),
            "decided": decided,
            "wins": {"a": a_wins, "b": decided - a_wins},
            "win_rate_a": figures["win_rate_a"],
            "flick_mix": _flick_mix(
                records, lambda r, side: "a" if side == config.side_of_a(r.index) else "b"
            ),
        },
    }
