"""The page as one immutable value: bases, soldiers, ink, turn, setup progress and generator position.

`State` is frozen. Rules modules build the next state with `evolve`, which copies the field dictionary
(cheap) and keeps the derived caches that are still valid, so a flick does not pay for rebuilding what
did not change. `snapshot()` is the public PROTOCOL.md "State"; `to_json()` adds the seed and the
generator position and is exact through `State.from_json`.
"""

from __future__ import annotations

import itertools
import math
import operator
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, Literal, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .errors import quoted
from .geometry import Circle
from .rng import check_seed, seed_from_hex, seed_to_hex
from .rules import RuleSet

Side = Literal["blue", "red"]
Phase = Literal["bases", "positioning", "play", "over"]
SIDES: tuple[Side, Side] = ("blue", "red")
PHASES: tuple[Phase, ...] = ("bases", "positioning", "play", "over")
END_REASONS = ("all_crossed_out", "resigned")

Event = dict[str, Any]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def other_side(side: Side) -> Side:
    """Returns the opposing side.

    >>> other_side("blue"), other_side("red")
    ('red', 'blue')
    """
    return "red" if side == "blue" else "blue"


def side_index(side: Side) -> int:
    """Returns 0 for blue and 1 for red (index into per-side pairs)."""
    return 0 if side == "blue" else 1


@dataclass(frozen=True, slots=True)
class Base:
    """A drawn base: a round wall of one side, with room for `capacity` soldiers."""

    id: str
    side: Side
    x: float
    y: float
    r: float
    capacity: int

    @property
    def shape(self) -> Circle:
        """The base's outline."""
        return Circle(self.x, self.y, self.r)

    def contains(self, x: float, y: float) -> bool:
        """Tells whether a point is inside the wall (on the wall counts as inside)."""
        dx, dy = x - self.x, y - self.y
        return dx * dx + dy * dy <= self.r * self.r

    def to_json(self) -> dict[str, Any]:
        """Returns the base as PROTOCOL.md writes it."""
        return {
            "id": self.id,
            "side": self.side,
            "x": self.x,
            "y": self.y,
            "r": self.r,
            "capacity": self.capacity,
        }


@dataclass(frozen=True, slots=True)
class Cross:
    """How a soldier was crossed out: by whom, why, and the colour of the cross."""

    by: str
    cause: str
    side: Side

    def to_json(self) -> dict[str, Any]:
        """Returns the cross as the snapshot writes it."""
        return {"by": self.by, "cause": self.cause, "side": self.side}


@dataclass(frozen=True, slots=True)
class Soldier:
    """A soldier dot: where he stands, whether he lives, whether he walks on the road."""

    id: str
    side: Side
    x: float
    y: float
    alive: bool = True
    on_road: bool = False
    cross: Cross | None = None

    def to_json(self) -> dict[str, Any]:
        """Returns the soldier as the snapshot writes it."""
        return {
            "id": self.id,
            "side": self.side,
            "x": self.x,
            "y": self.y,
            "alive": self.alive,
            "on_road": self.on_road,
            "cross": None if self.cross is None else self.cross.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Chain:
    """A pending lunge-again chain: the soldier, his lunges left, and the number of his next link."""

    soldier: str
    credits: int
    link: int

    def to_json(self) -> dict[str, Any]:
        """Returns the chain as the snapshot writes it."""
        return {"soldier": self.soldier, "credits": self.credits, "link": self.link}


@dataclass(frozen=True, slots=True)
class Turn:
    """The turn in play: whose, which, what is left of it."""

    side: Side
    number: int
    flicks_left: int
    chain: Chain | None = None
    sent: bool = False
    last_stand: bool = False
    flicked: bool = False

    def to_json(self) -> dict[str, Any]:
        """Returns the turn as the snapshot writes it."""
        return {
            "side": self.side,
            "number": self.number,
            "flicks_left": self.flicks_left,
            "chain": None if self.chain is None else self.chain.to_json(),
            "sent": self.sent,
            "last_stand": self.last_stand,
            "flicked": self.flicked,
        }


@dataclass(frozen=True, slots=True)
class Convoy:
    """Soldiers on the road from one base to another of the same side."""

    side: Side
    source: str
    to: str
    soldiers: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Returns the convoy as the snapshot writes it."""
        return {"side": self.side, "from": self.source, "to": self.to, "soldiers": list(self.soldiers)}


@dataclass(frozen=True, slots=True)
class Ink:
    """A line of ink on the page: the exact polyline of one flick."""

    side: Side
    kind: str
    soldier: str
    points: tuple[tuple[float, float], ...]
    power: float
    reach: float

    def to_json(self) -> dict[str, Any]:
        """Returns the ink as the `ink` event and the snapshot write it."""
        return {
            "side": self.side,
            "kind": self.kind,
            "soldier": self.soldier,
            "points": [[x, y] for x, y in self.points],
            "power": self.power,
            "reach": self.reach,
        }


class BaseArrays:
    """Numpy views of the bases, kept while the bases do not change (all through play).

    `x`, `y`, `r2` end with a "no base" circle that encloses every point, so that the first circle
    enclosing a soldier's centre is his base or, when no wall encloses him, the last one (`n_bases`).
    """

    __slots__ = ("all_r2", "code", "n_bases", "r2", "r2s", "x", "xs", "y", "ys")

    def __init__(self, state: State) -> None:
        bases = state.bases
        self.n_bases = len(bases)
        self.xs: list[float] = [b.x for b in bases]
        self.ys: list[float] = [b.y for b in bases]
        r2 = [b.r * b.r for b in bases]
        # One numpy step for the three rows (a small numpy step costs about 1 µs, whatever its size).
        self.x, self.y, self.r2 = cast(
            "tuple[FloatArray, FloatArray, FloatArray]",
            np.array(([*self.xs, 0.0], [*self.ys, 0.0], [*r2, math.inf]), dtype=np.float64),
        )
        # The owner's code (1 blue, 2 red), and 0 for the "no base" circle, which nobody holds.
        self.code: npt.NDArray[np.int8] = np.array(
            [1 if b.side == "blue" else 2 for b in bases] + [0], dtype=np.int8
        )
        dot_r = state.rules.dot_radius
        self.r2s: list[float] = r2 + [dot_r * dot_r] * len(state.soldiers)
        self.all_r2: FloatArray = np.array(self.r2s, dtype=np.float64)


class Arrays:
    """Numpy and list views of one state for the snipe and lunge hot paths.

    `all_x`, `all_y`, `all_r2` hold every circle at once, bases first, then soldiers' dots. `home[j]` is
    the base whose wall encloses soldier j's centre (bases never overlap), or `n_bases` when no wall
    does; `counted[j]` tells whether he holds that wall (alive, off the road, the owner's);
    `garrison[i]` counts base i's holders.
    """

    __slots__ = (
        "all_r2",
        "all_x",
        "all_y",
        "counted",
        "described",
        "garrison",
        "home",
        "n_bases",
        "r2s",
        "xs",
        "ys",
    )

    all_x: FloatArray
    all_y: FloatArray
    all_r2: FloatArray
    xs: list[float]  # the same numbers as Python floats, for the few circles a line comes near
    ys: list[float]
    r2s: list[float]
    n_bases: int
    home: list[int]
    counted: list[bool]
    garrison: list[int]
    described: tuple[Soldier, ...]  # the soldiers these views were computed for

    @classmethod
    def build(cls, state: State) -> Arrays:
        """Computes the views from scratch (few, larger numpy steps: small ones cost ~1 µs each)."""
        new = cls()
        soldiers = new.described = state.soldiers
        fixed = state.base_arrays
        n_bases = new.n_bases = fixed.n_bases
        xs = new.xs = fixed.xs + [s.x for s in soldiers]
        ys = new.ys = fixed.ys + [s.y for s in soldiers]
        all_x = new.all_x = np.array(xs, dtype=np.float64)
        all_y = new.all_y = np.array(ys, dtype=np.float64)
        new.all_r2 = fixed.all_r2
        new.r2s = fixed.r2s
        # 1 blue / 2 red for a soldier who can hold a wall (alive, off the road), 3 for one who cannot.
        code = np.array(
            [(1 if s.side == "blue" else 2) if s.alive and not s.on_road else 3 for s in soldiers],
            dtype=np.int8,
        )
        # Squared distances from every soldier to every base centre: the same sums as Base.contains.
        dx = all_x[n_bases:, None] - fixed.x
        dy = all_y[n_bases:, None] - fixed.y
        dx *= dx
        dy *= dy
        dx += dy
        # argmax finds the first enclosing circle in each row: his base, or the "no base" circle last.
        home = (dx <= fixed.r2).argmax(axis=1)
        counted = code == fixed.code[home]  # the "no base" code is 0, which matches nobody
        new.home = home.tolist()
        new.counted = counted.tolist()
        new.garrison = np.bincount(home[counted], minlength=n_bases).tolist()
        return new

    def patched(self, state: State) -> Arrays:
        """Returns the views for `state`, a later page with the same bases, re-deriving only the soldiers
        that are not the very same (immutable) objects as the ones these views describe."""
        if state.soldiers is self.described:
            return self
        if len(state.soldiers) != len(self.described):
            return Arrays.build(state)
        # Which soldiers are new objects, compared at C speed (`is not` pairwise, then their positions).
        changed = list(
            itertools.compress(
                range(len(state.soldiers)), map(operator.is_not, self.described, state.soldiers)
            )
        )
        new = Arrays()
        new.described = state.soldiers
        if not changed:  # views are never written after they are made, so they can be shared
            for name in Arrays.__slots__:
                if name != "described":
                    setattr(new, name, getattr(self, name))
            return new
        new.n_bases = n_bases = self.n_bases
        new.all_r2 = self.all_r2
        new.r2s = self.r2s
        new.all_x = self.all_x.copy()
        new.all_y = self.all_y.copy()
        new.xs = list(self.xs)
        new.ys = list(self.ys)
        new.home = list(self.home)
        new.counted = list(self.counted)
        new.garrison = list(self.garrison)
        for j in changed:
            soldier = state.soldiers[j]
            if new.counted[j]:
                new.garrison[new.home[j]] -= 1
            new.all_x[n_bases + j] = new.xs[n_bases + j] = soldier.x
            new.all_y[n_bases + j] = new.ys[n_bases + j] = soldier.y
            home = n_bases
            for i, base in enumerate(state.bases):
                if base.contains(soldier.x, soldier.y):
                    home = i
                    break
            new.home[j] = home
            new.counted[j] = holds = (
                home < n_bases
                and soldier.alive
                and not soldier.on_road
                and state.bases[home].side == soldier.side
            )
            if holds:
                new.garrison[home] += 1
        return new


@dataclass(frozen=True)
class State:
    """The whole page; immutable. Build a new one with `evolve`.

    >>> from dotfight.engine import RuleSet, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> page.version = 3
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'version'
    """

    rules: RuleSet
    seed: int
    rng: int = 0
    version: int = 0
    phase: Phase = "bases"
    bases: tuple[Base, ...] = ()
    soldiers: tuple[Soldier, ...] = ()
    ink: tuple[Ink, ...] = ()
    turn: Turn | None = None
    convoys: tuple[Convoy, ...] = ()
    ready: tuple[bool, bool] = (False, False)
    winner: Side | None = None
    end_reason: str | None = None

    # ---- derived, cached per state -------------------------------------------------------------

    @cached_property
    def soldier_index(self) -> dict[str, int]:
        """Soldier id → position in `soldiers` (shared by the pages with the same ids: never write it)."""
        ids = tuple(s.id for s in self.soldiers)
        return _shared_view(
            ("soldier_index", ids), lambda: {soldier_id: i for i, soldier_id in enumerate(ids)}
        )

    @cached_property
    def base_index(self) -> dict[str, int]:
        """Base id → position in `bases` (shared by the pages with the same ids: never write it)."""
        ids = tuple(b.id for b in self.bases)
        return _shared_view(("base_index", ids), lambda: {base_id: i for i, base_id in enumerate(ids)})

    @cached_property
    def base_arrays(self) -> BaseArrays:
        """Numpy arrays of the bases (and every circle's squared radius); shared by the pages with the same
        layout (every quick set-up of a preset): never written after they are made."""
        key = ("base_arrays", self.bases, len(self.soldiers), self.rules.dot_radius)
        return _shared_view(key, lambda: BaseArrays(self))

    @cached_property
    def arrays(self) -> Arrays:
        """Numpy arrays of bases and soldiers for the snipe and lunge hot paths."""
        # Patched from the earlier state's arrays, which this state then lets go: a page in memory keeps
        # one set of views, not two.
        earlier: Arrays | None = self.__dict__.pop(_EARLIER_ARRAYS, None)
        if earlier is not None:
            return earlier.patched(self)
        return Arrays.build(self)

    # ---- questions -----------------------------------------------------------------------------

    @property
    def actor(self) -> Side | None:
        """Whose move it is: the side drawing, arranging or playing; None when the page is over.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page = new_page(RuleSet.preset("quick"), seed=7)
        >>> page.actor
        'blue'
        >>> page, _ = apply(page, "blue", {"type": "draw_base", "x": 500, "y": 1100, "r": 80})
        >>> page.actor
        'red'
        >>> page, _ = apply(page, "red", {"type": "resign"})
        >>> page.phase, page.winner, page.actor
        ('over', 'blue', None)
        """
        if self.phase == "bases":
            return SIDES[len(self.bases) % 2]
        if self.phase == "positioning":
            return "blue" if not self.ready[0] else "red"
        if self.phase == "play" and self.turn is not None:
            return self.turn.side
        return None

    def soldier(self, soldier_id: str) -> Soldier:
        """Returns the soldier with this id (KeyError if there is none).

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.soldier("b3s1")
        Soldier(id='b3s1', side='blue', x=500.0, y=1050.0, alive=True, on_road=False, cross=None)
        """
        return self.soldiers[self.soldier_index[soldier_id]]

    def base(self, base_id: str) -> Base:
        """Returns the base with this id (KeyError if there is none).

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.base("b4")
        Base(id='b4', side='red', x=500.0, y=350.0, r=70.0, capacity=8)
        """
        return self.bases[self.base_index[base_id]]

    def living(self, side: Side) -> list[Soldier]:
        """Returns the side's living soldiers (on the road included).

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> len(page.living("blue")), page.living("red")[0].id
        (24, 'b2s1')
        """
        return [s for s in self.soldiers if s.alive and s.side == side]

    def flickable(self, side: Side) -> list[str]:
        """Returns the ids of the side's soldiers that may flick now (only the chain lunger in a chain).

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.flickable("blue")
        ['b1s1', 'b1s2', ..., 'b5s8']
        """
        turn = self.turn
        if turn is not None and turn.side == side and turn.chain is not None:
            return [turn.chain.soldier]
        return [s.id for s in self.soldiers if s.alive and s.side == side and not s.on_road]

    def bases_of(self, side: Side) -> list[Base]:
        """Returns the side's bases in drawing order.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> [base.id for base in page.bases_of("red")]
        ['b2', 'b4', 'b6']
        """
        return [b for b in self.bases if b.side == side]

    def base_at(self, x: float, y: float) -> Base | None:
        """Returns the base whose wall encloses the point (bases never overlap), or None.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.base_at(500, 1100).id, page.base_at(500, 700)
        ('b3', None)
        """
        for base in self.bases:
            if base.contains(x, y):
                return base
        return None

    def garrison(self, base: Base, excluding: str | None = None) -> int:
        """Counts the owner's living soldiers inside the base, not on the road (`excluding` one id).

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.garrison(page.base("b3")), page.garrison(page.base("b3"), excluding="b3s1")
        (8, 7)
        """
        return sum(
            1
            for s in self.soldiers
            if s.alive
            and not s.on_road
            and s.side == base.side
            and s.id != excluding
            and base.contains(s.x, s.y)
        )

    def fullness(self, base: Base, excluding: str | None = None) -> float:
        """Returns `min(1, garrison / capacity)` for the base.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.fullness(page.base("b3")), page.fullness(page.base("b3"), excluding="b3s1")
        (1.0, 0.875)
        """
        return min(1.0, self.garrison(base, excluding) / base.capacity)

    # ---- JSON ----------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Returns the public PROTOCOL.md "State": no seed, no generator position.

        >>> from dotfight.engine import RuleSet, new_page
        >>> snapshot = new_page(RuleSet.preset("quick"), seed=7).snapshot()
        >>> snapshot["version"], snapshot["phase"], snapshot["side_to_act"], snapshot["setup"]
        (0, 'bases', 'blue', {'bases_drawn': {'blue': 0, 'red': 0}, 'ready': {'blue': False, 'red': False}})
        >>> "seed" in snapshot or "rng" in snapshot
        False
        """
        blue_bases = sum(1 for b in self.bases if b.side == "blue")
        return {
            "version": self.version,
            "phase": self.phase,
            "rules": self.rules.to_json(),
            "side_to_act": self.actor,
            "turn": None if self.turn is None else self.turn.to_json(),
            "bases": [b.to_json() for b in self.bases],
            "soldiers": [s.to_json() for s in self.soldiers],
            "ink": [ink.to_json() for ink in self.ink],
            "convoys": [c.to_json() for c in self.convoys],
            "setup": {
                "bases_drawn": {"blue": blue_bases, "red": len(self.bases) - blue_bases},
                "ready": {"blue": self.ready[0], "red": self.ready[1]},
            },
            "winner": self.winner,
            "end_reason": self.end_reason,
        }

    def to_json(self) -> dict[str, Any]:
        """Returns the snapshot plus the seed (32 hex digits) and generator position: private, exact.

        >>> from dotfight.engine import RuleSet, new_page
        >>> data = new_page(RuleSet.preset("quick"), seed=255).to_json()
        >>> data["seed"], data["rng"]
        ('000000000000000000000000000000ff', 0)
        """
        data = self.snapshot()
        data["seed"] = seed_to_hex(self.seed)
        data["rng"] = self.rng
        return data

    @classmethod
    def from_json(cls, data: object) -> State:
        """Rebuilds a state from `to_json()` output; raises ValueError on anything malformed.

        >>> import json
        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> State.from_json(json.loads(json.dumps(page.to_json()))) == page
        True
        >>> State.from_json({"phase": "lunch"})
        Traceback (most recent call last):
        ...
        ValueError: bad phase 'lunch'
        """
        try:
            return _state_from_json(data)
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ValueError(f"not a Dotfight state: {quoted(exc)}") from exc

    def with_rng(self, seed: int) -> State:
        """Returns the same page with another generator (seed, position 0): luck a bot may sample.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> guess = page.with_rng(99)
        >>> guess.seed, guess.rng, guess.soldiers == page.soldiers, page.seed
        (99, 0, True, 7)
        """
        return evolve(self, seed=check_seed(seed), rng=0)


# Views derived from a page's layout alone (its bases, its soldiers' ids and count) are the same on every
# page set up alike — every quick set-up of a preset — and are shared between the pages a server holds
# (about 4 KB a page, issue 12). The layouts seen last are kept; the engine's threads share them.
_SHARED_LAYOUTS = 64
_shared_views: dict[tuple[Any, ...], Any] = {}
_shared_lock = threading.Lock()

_View = TypeVar("_View")


def _shared_view(key: tuple[Any, ...], make: Callable[[], _View]) -> _View:
    with _shared_lock:
        view: _View | None = _shared_views.pop(key, None)
        if view is None:
            view = make()
            if len(_shared_views) >= _SHARED_LAYOUTS:
                del _shared_views[next(iter(_shared_views))]
        _shared_views[key] = view  # the most recent last
        return view


def _shared_rules(rules: RuleSet) -> RuleSet:
    """Returns an equal RuleSet held already (pages of one preset share one: ≈ 0.8 KB a page)."""
    return _shared_view(("rules", rules), lambda: rules)


_FIELD_NAMES = frozenset(f.name for f in fields(State))
# Caches that stay valid as long as the soldiers' and bases' ids do not change.
_INDEX_CACHES = ("soldier_index", "base_index", "base_arrays")
# Instance-dictionary key of an earlier state's arrays, from which this state's are patched when first used.
_EARLIER_ARRAYS = "_earlier_arrays"
# Everything a state's dictionary may hold besides its fields (tests/engine/test_state_memory.py checks
# that this names every cached view of State).
_CACHES = (*_INDEX_CACHES, "arrays", _EARLIER_ARRAYS)


def evolve(state: State, **changes: Any) -> State:
    """Returns a copy of the state with the named fields changed (no validation: rules modules only).

    Copies the instance dictionary directly, which is several times faster than `dataclasses.replace`
    on a hot path, and keeps the derived caches: the id indexes while the bases stay, and the hot
    paths' arrays, which the new state patches lazily (only for soldiers that are new objects) on
    first use.
    """
    new = object.__new__(State)
    new_dict = new.__dict__
    new_dict.update(state.__dict__)  # the fields and the views (one C-level copy), then the changes
    new_dict.update(changes)
    if len(new_dict) == len(_FIELD_NAMES):
        return new  # no view to carry
    if "bases" in changes:
        for cache in _CACHES:
            new_dict.pop(cache, None)
    elif "soldiers" in changes:
        arrays = new_dict.pop("arrays", None)
        if arrays is not None:
            new_dict[_EARLIER_ARRAYS] = arrays
    elif "arrays" in new_dict:
        new_dict.pop(_EARLIER_ARRAYS, None)  # the state's own arrays are carried; the earlier ones are not
    return new


def replace_soldiers(state: State, updates: dict[int, Soldier]) -> tuple[Soldier, ...]:
    """Returns the soldiers tuple with the given positions replaced."""
    soldiers = list(state.soldiers)
    for index, soldier in updates.items():
        soldiers[index] = soldier
    return tuple(soldiers)


def evolve_soldiers(state: State, updates: dict[int, Soldier], **changes: Any) -> State:
    """Returns `evolve(state, soldiers=…, **changes)` with the soldiers at the given indexes replaced."""
    return evolve(state, soldiers=replace_soldiers(state, updates), **changes)


def new_page(rules: RuleSet, seed: int) -> State:
    """Starts a blank page: phase "bases", version 0, blue to draw first.

    >>> from dotfight.engine import RuleSet, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> page.phase, page.version, page.actor, page.bases, page.soldiers
    ('bases', 0, 'blue', (), ())
    >>> new_page(RuleSet.preset("quick"), seed=2**128)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer in [0, 2**128), got 340282366920938463463374607431768211456
    """
    if not isinstance(rules, RuleSet):
        raise TypeError(f"rules must be a RuleSet, got {type(rules).__name__}")
    return State(rules=_shared_rules(rules), seed=check_seed(seed))


# ---- from_json ---------------------------------------------------------------------------------


def _side(value: object) -> Side:
    # The module's own constants, not the decoded copies: one string for every page in memory.
    if value == "blue":
        return "blue"
    if value == "red":
        return "red"
    raise ValueError(f"bad side {quoted(value)}")


def _num(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"bad number {quoted(value)}")
    return float(value)


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"bad integer {quoted(value)}")
    return value


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"bad flag {quoted(value)}")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"bad text {quoted(value)}")
    # Ids and the rules' words (b1s1, snipe, base_lost …) repeat on every page a server holds: interned.
    return sys.intern(value)


def _state_from_json(data: object) -> State:
    if not isinstance(data, dict):
        raise ValueError("a state must be an object")
    phase = data["phase"]
    if phase not in PHASES:
        raise ValueError(f"bad phase {quoted(phase)}")
    bases = tuple(
        Base(_str(b["id"]), _side(b["side"]), _num(b["x"]), _num(b["y"]), _num(b["r"]), _int(b["capacity"]))
        for b in data["bases"]
    )
    soldiers = []
    for s in data["soldiers"]:
        cross = s["cross"]
        soldiers.append(
            Soldier(
                _str(s["id"]),
                _side(s["side"]),
                _num(s["x"]),
                _num(s["y"]),
                _bool(s["alive"]),
                _bool(s["on_road"]),
                None
                if cross is None
                else Cross(_str(cross["by"]), _str(cross["cause"]), _side(cross["side"])),
            )
        )
    ink = tuple(
        Ink(
            _side(i["side"]),
            _str(i["kind"]),
            _str(i["soldier"]),
            tuple((_num(p[0]), _num(p[1])) for p in i["points"]),
            _num(i["power"]),
            _num(i["reach"]),
        )
        for i in data["ink"]
    )
    turn_data = data["turn"]
    turn = None
    if turn_data is not None:
        chain_data = turn_data["chain"]
        chain = (
            None
            if chain_data is None
            else Chain(_str(chain_data["soldier"]), _int(chain_data["credits"]), _int(chain_data["link"]))
        )
        turn = Turn(
            _side(turn_data["side"]),
            _int(turn_data["number"]),
            _int(turn_data["flicks_left"]),
            chain,
            _bool(turn_data["sent"]),
            _bool(turn_data["last_stand"]),
            _bool(turn_data["flicked"]),
        )
    convoys = tuple(
        Convoy(_side(c["side"]), _str(c["from"]), _str(c["to"]), tuple(_str(x) for x in c["soldiers"]))
        for c in data["convoys"]
    )
    ready = data["setup"]["ready"]
    winner = data["winner"]
    end_reason = data["end_reason"]
    if end_reason is not None and end_reason not in END_REASONS:
        raise ValueError(f"bad end_reason {quoted(end_reason)}")
    return State(
        rules=_shared_rules(RuleSet.from_json(data["rules"])),
        seed=seed_from_hex(data["seed"]),
        rng=_int(data["rng"]),
        version=_int(data["version"]),
        phase=cast(Phase, phase),
        bases=bases,
        soldiers=tuple(soldiers),
        ink=ink,
        turn=turn,
        convoys=convoys,
        ready=(_bool(ready["blue"]), _bool(ready["red"])),
        winner=None if winner is None else _side(winner),
        end_reason=end_reason,
    )
