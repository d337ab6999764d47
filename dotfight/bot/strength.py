"""How hard Dawood-bot thinks: the three strengths differ in candidates tried and luck sampled."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Strength:
    """The knobs of one strength."""

    name: str
    pairs: int  # (shooter, target) pairs turned into candidate flicks
    trials: int  # best-forecast candidates tried through the engine
    samples: int  # luck samples per tried candidate
    rows: bool  # looks for two enemies in a row (two with one bullet)
    gamble: bool  # also considers full-power flicks
    sends: bool  # re-mans thinned bases and avoids exposed roads
    arranges: bool  # re-arranges its soldiers away from rows, toward the back of the base
    bait: float  # chance to step one man out in front of a full base as bait
    caution: float  # weight of the enemy's best reply against what a flick gains
    replies: int = 0  # enemy answers played out through the engine per judged page (0: a formula)
    spread: float = 0.3  # weight of every exposed man's danger (standing liabilities), beyond the best reply


STRENGTHS: dict[str, Strength] = {
    "easy": Strength("easy", pairs=6, trials=3, samples=1, rows=False, gamble=False, sends=False,
                     arranges=False, bait=0.0, caution=0.3),
    "normal": Strength("normal", pairs=14, trials=6, samples=3, rows=True, gamble=False, sends=True,
                       arranges=True, bait=0.2, caution=1.0, replies=3),
    "hard": Strength("hard", pairs=30, trials=12, samples=6, rows=True, gamble=True, sends=True,
                     arranges=True, bait=0.3, caution=1.0, replies=4),
}
