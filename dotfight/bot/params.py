"""The rule numbers the bot reasons with, read once from a page's rules.

The bot never trusts its own copy of the rule book: every number comes from the page's `RuleSet`, so a
bot plays the rules lab's overridden pages as well as the defaults.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from dotfight.engine import RuleSet
from dotfight.engine.flick import reach as rules_reach
from dotfight.engine.flick import wild_spread

# One wall's fullness, or every wall's at once.
Fullness = TypeVar("Fullness", float, npt.NDArray[np.float64])


@dataclass(frozen=True)
class Params:
    """The rule parameters of RULES.md that the bot's predictions use."""

    page_width: float
    page_height: float
    dot_radius: float
    outside_margin: float
    base_radius_min: float
    base_radius_max: float
    base_gap: float
    pull_max: float
    reach_min_frac: float
    reach_curve: float
    wildness: float
    wall_loss_empty: float
    wall_loss_full: float
    man_loss: float
    shake_empty: float
    shake_full: float
    shake_man: float
    lunge_link_shake: float
    send_max: int
    last_stand_at: int
    last_stand_flicks: int
    last_stand_steady: float
    bases_per_side: int
    soldiers_per_base: int
    rules: RuleSet  # the page's own rules: the formulas below are the engine's, not copies

    @classmethod
    def of(cls, rules: RuleSet) -> Params:
        """Reads the parameters from a `RuleSet` (remembered: a page asks for them at every trial)."""
        return _params_of(rules)

    @property
    def diagonal(self) -> float:
        """The longest line on the page, `D` of RULES.md §1."""
        return self.rules.diagonal

    @property
    def mid_y(self) -> float:
        """The line between the halves."""
        return self.rules.half_y

    def reach(self, power: float) -> float:
        """The reach `L` of a flick of power `t` in [0, 1] (RULES.md §4)."""
        return rules_reach(self.rules, power)

    def power_for(self, reach: float) -> float | None:
        """The smallest power whose reach is at least `reach`, or None when no flick reaches that far."""
        frac = reach / self.diagonal
        if frac > 1.0 + 1e-9:
            return None
        share = (frac - self.reach_min_frac) / (1 - self.reach_min_frac)
        if share <= 0:
            return 0.0
        return float(min(1.0, share ** (1 / self.reach_curve)))

    def spread(self, power: float) -> float:
        """The launch spread (radians) of a flick of power `t`."""
        return wild_spread(self.rules, power)

    def wall_loss(self, fullness: Fullness) -> Fullness:
        """The share of reach a snipe loses crossing a wall of the given fullness (or of each wall's)."""
        return self.wall_loss_empty + (self.wall_loss_full - self.wall_loss_empty) * fullness

    def wall_shake(self, fullness: Fullness) -> Fullness:
        """The spread a lunger's run turns by crossing a wall of the given fullness (or of each wall's)."""
        return self.shake_empty + (self.shake_full - self.shake_empty) * fullness

    def aim(self, angle: float, power: float) -> list[float]:
        """The aim vector `[dx, dy]` for a direction and a power (never shorter than the 1-unit minimum)."""
        length = max(1.5, min(1.0, power) * self.pull_max)
        return [length * math.cos(angle), length * math.sin(angle)]


@lru_cache(maxsize=64)
def _params_of(rules: RuleSet) -> Params:
    values: dict[str, Any] = {"rules": rules}
    for name, kind in Params.__annotations__.items():
        if name == "rules":
            continue
        raw = getattr(rules, name)
        values[name] = int(raw) if kind == "int" else float(raw)
    return Params(**values)
