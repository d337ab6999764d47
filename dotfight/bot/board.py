"""A compact, array-shaped reading of a page for fast reasoning.

The engine's `State` is the truth; the bot reads it once into numpy arrays (soldiers, bases, the turn)
so that predictions over many candidate flicks cost microseconds, not dictionary walks. The rules it
reads are asked of the engine, not re-derived: who stands (`guards.standing`), who holds which wall
(`flick.wall_holders`), how full a wall is (`flick.fullness`) and who may flick now (`query.flickable`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dotfight.engine import RuleSet, State, flickable
from dotfight.engine import Turn as EngineTurn
from dotfight.engine.flick import NO_HOLDER, fullness, wall_holders
from dotfight.engine.guards import standing
from dotfight.engine.views import BaseArrays

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
    stands: BoolArray  # per soldier: the engine's `standing` (alive, off the road)
    flickable_now: IntArray  # the engine's `flickable` of the side to act: who may flick now
    walls: BaseArrays  # the engine's views of the bases, as `flick.wall_holders` reads them (shared)

    @classmethod
    def of(cls, state: State) -> Board:
        """Reads an engine `State`: its public fields, and the views the engine keeps of it for who holds
        which wall (`state.arrays`, `state.base_arrays`: read, never written); never the generator."""
        soldiers, bases = state.soldiers, state.bases
        n = len(soldiers)
        sides = [s.side for s in soldiers]
        soldier_side = np.fromiter((side == "red" for side in sides), dtype=np.int64, count=n)
        xy = np.array([(s.x, s.y) for s in soldiers], dtype=np.float64).reshape(-1, 2)
        alive = np.fromiter((s.alive for s in soldiers), dtype=np.bool_, count=n)
        on_road = np.fromiter((s.on_road for s in soldiers), dtype=np.bool_, count=n)
        stands = np.fromiter(map(standing, soldiers, sides), dtype=np.bool_, count=n)
        base_side = np.fromiter((b.side == "red" for b in bases), dtype=np.int64, count=len(bases))
        base_xy = np.array([(b.x, b.y) for b in bases], dtype=np.float64).reshape(-1, 2)
        base_r = np.fromiter((b.r for b in bases), dtype=np.float64, count=len(bases))
        base_cap = np.fromiter((b.capacity for b in bases), dtype=np.float64, count=len(bases))
        views = state.arrays  # the engine's holders of every wall (flick.wall_holders, patched by holds)
        held = np.array(views.counted, dtype=np.bool_)
        home = np.where(held, np.array(views.home, dtype=np.int64), -1)
        garrison = np.array(views.garrison, dtype=np.int64)
        actor = state.actor
        now = flickable(state, actor) if actor is not None else []
        index = state.soldier_index
        flickable_now = np.fromiter((index[s] for s in now), dtype=np.int64, count=len(now))
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
            stands=stands,
            flickable_now=flickable_now,
            walls=state.base_arrays,
        )

    # --- who is who ---------------------------------------------------------------------------------

    def side_index(self, side: str) -> int:
        """0 for blue, 1 for red."""
        return SIDES.index(side)

    def living(self, side: str) -> IntArray:
        """Indices of a side's living soldiers, the road included."""
        return np.flatnonzero(self.alive & (self.soldier_side == self.side_index(side)))

    def standing(self, side: str) -> IntArray:
        """Indices of a side's standing soldiers (alive, off the road): the men who hold its walls and
        who will flick in its turn."""
        return np.flatnonzero(self.stands & (self.soldier_side == self.side_index(side)))

    def flickable(self, side: str) -> IntArray:
        """Indices of the side's soldiers the engine lets flick now (`query.flickable`): none out of its
        turn, only the lunger while a chain is pending."""
        if side != self.actor:
            return np.zeros(0, dtype=np.int64)
        return self.flickable_now

    def bases_of(self, side: str) -> IntArray:
        """Indices of a side's bases."""
        return np.flatnonzero(self.base_side == self.side_index(side))

    def index_of(self, soldier_id: str) -> int:
        """The array index of a soldier id."""
        return self.soldier_ids.index(soldier_id)

    def fullness(self) -> FloatArray:
        """Every base's fullness (`flick.fullness`: `min(1, n / capacity)`)."""
        return fullness(self.garrison, self.base_cap)

    def count_alive(self, side: str) -> int:
        """How many soldiers of a side are alive."""
        return int(self.living(side).size)


def locate_homes(
    xy: FloatArray, stands: BoolArray, soldier_side: IntArray, walls: BaseArrays
) -> tuple[IntArray, IntArray]:
    """Finds the own base each soldier holds (-1 for none) and every base's garrison, for soldiers
    standing at `xy` (a board the bot imagines): the engine's `flick.wall_holders` on the engine's views
    of the walls (`stands`: the engine's `standing` per soldier)."""
    codes = np.where(stands, soldier_side + 1, NO_HOLDER)  # SIDE_CODES: 1 blue, 2 red
    home, held, garrison = wall_holders(xy[:, 0], xy[:, 1], codes, walls.x, walls.y, walls.r2, walls.code)
    return np.where(held, home, -1).astype(np.int64), garrison.astype(np.int64)
