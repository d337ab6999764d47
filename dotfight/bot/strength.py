"""How hard Dawood-bot thinks: the three strengths differ in candidates tried and luck sampled."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Strength:
    """The knobs of one strength."""

    name: str
    pairs: int  # (shooter, target) pairs turned into candidate flicks
    trials: int  # best-forecast candidates tried through the engine
    samples: int  # luck samples per tried candidate
    rows: bool  # looks for two enemies in a row (two with one bullet)
    sends: bool  # re-mans thinned bases and avoids exposed roads
    bait: float  # chance to step one man out in front of the front base as bait, at setup
    caution: float = 0.3  # weight of the enemy's best reply against what a flick gains
    lunge_bar: float = -1e9  # a lunge that starts no chain must forecast at least this net gain (men)
    depth: float = 0.47  # where its bases sit, from the middle line (0) to the back edge of its half (1)
    spread: float = 0.3  # weight of every exposed man's danger (standing liabilities), beyond the best reply


# In lab play a side that lunges freely loses to one that snipes and lunges only on a sure gain (a
# stranded lunger is crossed out in the enemy's next turn, and his killer earns a chain): the easy bot
# lunges freely, the others hold a bar.
_EASY = Strength("easy", pairs=3, trials=1, samples=1, rows=False, sends=False, bait=0.0)
_NORMAL = Strength("normal", pairs=12, trials=4, samples=3, rows=True, sends=True, bait=0.1, lunge_bar=1.5)
# Hard plays as normal does, only with more candidates tried and more luck sampled.
_HARD = dataclasses.replace(_NORMAL, name="hard", pairs=30, trials=12, samples=10)

STRENGTHS: dict[str, Strength] = {s.name: s for s in (_EASY, _NORMAL, _HARD)}
