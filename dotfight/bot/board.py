"""A compact, array-shaped reading of a page for fast reasoning.

The engine's `State` is the truth; the bot reads it once into numpy arrays (soldiers, bases, the turn)
so that predictions over many candidate flicks cost microseconds, not dictionary walks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dotfight.engine import RuleSet
from dotfight.engine.state import State
from dotfight.engine.state import Turn as EngineTurn

SIDES = ("blue", "red")

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def other(side: str) -> str:
    """Returns the opposing side."""
    return "red" if side == "blue" else "blue"


@dataclass(frozen=True)
class Turn:
    """The play-phase turn as the snapshot tells it."""

    side: str | None
    flicks_left: int
    chain_soldier: str | None
    chain_link: int
    sent: bool
    flicked: bool
    last_stand: bool

    @classmethod
    def of(cls, turn: EngineTurn | None) -> Turn:
        """Reads the engine's turn (None outside play: nobody's turn, nothing left)."""
        if turn is None:
            return cls(None, 0, None, 0, sent=False, flicked=False, last_stand=False)
        chain = turn.chain
        return cls(
            side=turn.side,
            flicks_left=turn.flicks_left,
            chain_soldier=chain.soldier if chain is not None else None,
            chain_link=chain.link if chain is not None else 0,
            sent=turn.sent,
            flicked=turn.flicked,
            last_stand=turn.last_stand,
        )


@dataclass(frozen=True)
class Board:
    """Soldiers and bases of one page as parallel arrays, plus the phase and the turn."""

    rules: RuleSet
    phase: str
    actor: str | None
    winner: str | None
    version: int
    turn: Turn
    soldier_ids: list[str]
    soldier_side: IntArray  # 0 blue, 1 red
    xy: FloatArray  # (n, 2)
    alive: BoolArray
    on_road: BoolArray
    base_ids: list[str]
    base_side: IntArray
    base_xy: FloatArray  # (b, 2)
    base_r: FloatArray
    base_cap: FloatArray
    home: IntArray  # index of the own base a soldier stands inside, -1 if none (dead, road, open paper)
    garrison: IntArray  # per base: the owner's living soldiers inside

    @classmethod
    def of(cls, state: State) -> Board:
        """Reads an engine `State` (its public fields; the generator is never touched)."""
        # Only the State's documented fields are read (its numpy caches are the engine's own business).
        soldiers, bases = state.soldiers, state.bases
        soldier_side = np.fromiter((s.side == "red" for s in soldiers), dtype=np.int64, count=len(soldiers))
        xy = np.array([(s.x, s.y) for s in soldiers], dtype=np.float64).reshape(-1, 2)
        alive = np.fromiter((s.alive for s in soldiers), dtype=np.bool_, count=len(soldiers))
        on_road = np.fromiter((s.on_road for s in soldiers), dtype=np.bool_, count=len(soldiers))
        base_side = np.fromiter((b.side == "red" for b in bases), dtype=np.int64, count=len(bases))
        base_xy = np.array([(b.x, b.y) for b in bases], dtype=np.float64).reshape(-1, 2)
        base_r = np.fromiter((b.r for b in bases), dtype=np.float64, count=len(bases))
        base_cap = np.fromiter((b.capacity for b in bases), dtype=np.float64, count=len(bases))
        home, garrison = locate_homes(xy, alive, on_road, soldier_side, base_xy, base_r, base_side)
        return cls(
            rules=state.rules,
            phase=state.phase,
            actor=state.actor,
            winner=state.winner,
            version=state.version,
            turn=Turn.of(state.turn),
            soldier_ids=[s.id for s in soldiers],
            soldier_side=soldier_side,
            xy=xy,
            alive=alive,
            on_road=on_road,
            base_ids=[b.id for b in bases],
            base_side=base_side,
            base_xy=base_xy,
            base_r=base_r,
            base_cap=base_cap,
            home=home,
            garrison=garrison,
        )

    # --- who is who ---------------------------------------------------------------------------------

    def side_index(self, side: str) -> int:
        """0 for blue, 1 for red."""
        return SIDES.index(side)

    def living(self, side: str) -> IntArray:
        """Indices of a side's living soldiers, the road included."""
        return np.flatnonzero(self.alive & (self.soldier_side == self.side_index(side)))

    def flickable(self, side: str) -> IntArray:
        """Indices of a side's soldiers that may flick: alive and off the road."""
        mask = self.alive & ~self.on_road & (self.soldier_side == self.side_index(side))
        return np.flatnonzero(mask)

    def bases_of(self, side: str) -> IntArray:
        """Indices of a side's bases."""
        return np.flatnonzero(self.base_side == self.side_index(side))

    def index_of(self, soldier_id: str) -> int:
        """The array index of a soldier id."""
        return self.soldier_ids.index(soldier_id)

    def fullness(self) -> FloatArray:
        """Every base's fullness `min(1, n / capacity)`."""
        return np.minimum(1.0, self.garrison / np.maximum(self.base_cap, 1.0))

    def count_alive(self, side: str) -> int:
        """How many soldiers of a side are alive."""
        return int(self.living(side).size)


def locate_homes(
    xy: FloatArray,
    alive: BoolArray,
    on_road: BoolArray,
    soldier_side: IntArray,
    base_xy: FloatArray,
    base_r: FloatArray,
    base_side: IntArray,
) -> tuple[IntArray, IntArray]:
    """Finds the own base each soldier stands inside and every base's garrison."""
    n, b = len(xy), len(base_xy)
    home = np.full(n, -1, dtype=np.int64)
    garrison = np.zeros(b, dtype=np.int64)
    if n == 0 or b == 0:
        return home, garrison
    dist = np.hypot(xy[:, None, 0] - base_xy[None, :, 0], xy[:, None, 1] - base_xy[None, :, 1])
    inside = (dist <= base_r[None, :]) & (soldier_side[:, None] == base_side[None, :])
    inside &= (alive & ~on_road)[:, None]
    has = inside.any(axis=1)
    home[has] = np.argmax(inside[has], axis=1)
    garrison = np.bincount(home[has], minlength=b).astype(np.int64)
    return home, garrison
