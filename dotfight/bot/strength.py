"""How hard Dawood-bot thinks: the three strengths differ in depth of search, never in policy.

Every strength weighs the same things the same way (`evaluate`); they differ in how many candidate
flicks they draw up, how many they play through the engine, how much luck they sample for each, and in
the human-sized slips of the easy bot (noise on its judgement of each flick).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Strength:
    """The knobs of one strength."""

    name: str
    pairs: int  # (shooter, target) pairs turned into candidate flicks
    width: int  # best-forecast candidates played through the engine in the first round
    first: int  # luck samples per candidate in the first round
    rounds: int  # halvings: each keeps the better half and doubles its samples
    noise: float = 0.0  # spread (men) of the slip added to each candidate's judged worth

    def evaluations(self) -> int:
        """How many engine trials a full search makes at most (stop and sends aside)."""
        total, active, samples = self.width * self.first, self.width, self.first
        for _ in range(self.rounds):
            active = (active + 1) // 2
            total += active * samples
            samples *= 2
        return total


_EASY = Strength("easy", pairs=4, width=3, first=1, rounds=0, noise=0.35)
_NORMAL = Strength("normal", pairs=12, width=6, first=2, rounds=2)
_HARD = Strength("hard", pairs=30, width=14, first=2, rounds=3)

STRENGTHS: dict[str, Strength] = {s.name: s for s in (_EASY, _NORMAL, _HARD)}

import os  # noqa: E402  # TEMPORARY tuning hook

for _name in STRENGTHS:
    _spec = os.environ.get(f"DAWOOD_{_name.upper()}")
    if _spec:
        _p, _w, _f, _r, _n = _spec.split(",")
        STRENGTHS[_name] = Strength(_name, int(_p), int(_w), int(_f), int(_r), float(_n))

# What the bot may do (contract C3): "full" plays every tactic; "snipe-only" never lunges; "no-outside"
# keeps every man inside a base when arranging. The lab's head-to-heads ask whether a tactic pays.
POLICIES = ("full", "snipe-only", "no-outside")
