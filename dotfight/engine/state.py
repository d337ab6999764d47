"""The page as one immutable value: bases, soldiers, ink, turn, setup progress and generator position.

`State` is frozen. Rules modules build the next state with `evolve`, which copies the field dictionary
(cheap) and keeps the derived caches that are still valid, so a flick does not pay for rebuilding what
did not change. `snapshot()` is the public PROTOCOL.md "State"; `to_json()` adds the seed and the
generator position and is exact through `State.from_json`.

The pieces a state is made of are engine/values.py, the hot paths' views of it engine/views.py, the way
back from JSON engine/codec.py, and the copies pages set up alike share engine/interning.py.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

from .codec import state_fields
from .errors import quoted
from .flick import fullness, holds
from .interning import shared_rules, shared_view, view_of_shared
from .rng import check_seed, seed_to_hex
from .rules import RuleSet
from .values import SIDES, Base, Convoy, Ink, Phase, Side, Soldier, Turn
from .views import Arrays, BaseArrays, Roster, enclosing_wall

__all__ = ["State", "evolve", "evolve_soldiers", "new_page", "replace_soldiers"]


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
        return shared_view(
            ("soldier_index", ids), lambda: {soldier_id: i for i, soldier_id in enumerate(ids)}
        )

    @cached_property
    def base_index(self) -> dict[str, int]:
        """Base id → position in `bases` (shared by the pages with the same ids: never write it)."""
        ids = tuple(b.id for b in self.bases)
        return shared_view(("base_index", ids), lambda: {base_id: i for i, base_id in enumerate(ids)})

    @cached_property
    def base_arrays(self) -> BaseArrays:
        """Numpy arrays of the bases (and every circle's squared radius); shared by the pages with the same
        layout (every quick set-up of a preset): never written after they are made."""
        # The soldiers' sides are part of the layout: the coarse line test leaves each side's own men out
        # (`BaseArrays.near2_against`), and a state built by hand may give the same bases other men.
        key = ("base_arrays", self.bases, tuple([s.side for s in self.soldiers]), self.rules.dot_radius)
        return shared_view(key, lambda: BaseArrays(self))

    @cached_property
    def arrays(self) -> Arrays:
        """Numpy arrays of bases and soldiers for the snipe and lunge hot paths."""
        # Patched from the earlier state's arrays, which this state then lets go: a page in memory keeps
        # one set of views, not two.
        earlier: Arrays | None = self.__dict__.pop(_EARLIER_ARRAYS, None)
        if earlier is not None:
            return earlier.patched(self)
        # Pages set up alike share their soldiers until one moves or falls, and then these views too (the
        # views hold the bases' views the key names).
        base_arrays = self.base_arrays
        return view_of_shared(self.soldiers, ("arrays", id(base_arrays)), lambda: Arrays.build(self))

    @cached_property
    def roster(self) -> Roster:
        """Who stands and how many live on each side (engine/views.py `Roster`): kept by the later states
        while the soldiers stay, so the turn's start and its options do not ask every soldier again."""
        return view_of_shared(self.soldiers, ("roster",), lambda: Roster(self.soldiers))

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
        """Returns the ids of the side's soldiers `apply` would let flick now: `query.flickable`, the
        engine's one answer (none out of turn or out of play; only the lunger while a chain is pending).
        Kept as a method for the callers written against it; new code asks `flickable(state, side)`.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page = new_page(RuleSet.preset("quick"), seed=7)
        >>> for side, kind in [("blue", "quick_setup"), ("blue", "ready"), ("red", "ready")]:
        ...     page, _ = apply(page, side, {"type": kind})
        >>> page.flickable("blue"), page.flickable("red")
        (['b1s1', 'b1s2', ..., 'b5s8'], [])
        """
        from .query import flickable  # the rule questions sit above the state they ask about

        return flickable(self, side)

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
        index = enclosing_wall(self, x, y)
        return self.bases[index] if index < len(self.bases) else None

    def garrison(self, base: Base, excluding: str | None = None) -> int:
        """Counts the base's holders (`flick.holds`: the owner's living soldiers inside, not on the
        road), `excluding` one id; soldier by soldier, where the hot paths read `arrays.garrison`.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.garrison(page.base("b3")), page.garrison(page.base("b3"), excluding="b3s1")
        (8, 7)
        """
        return sum(1 for s in self.soldiers if s.id != excluding and holds(s, base))

    def fullness(self, base: Base, excluding: str | None = None) -> float:
        """Returns the base's `flick.fullness`: `min(1, garrison / capacity)`.

        >>> from dotfight.engine import RuleSet, apply, new_page
        >>> page, _ = apply(new_page(RuleSet.preset("quick"), seed=7), "blue", {"type": "quick_setup"})
        >>> page.fullness(page.base("b3")), page.fullness(page.base("b3"), excluding="b3s1")
        (1.0, 0.875)
        """
        return fullness(self.garrison(base, excluding), base.capacity)

    # ---- JSON ----------------------------------------------------------------------------------

    def snapshot(self, *, ink: bool = True) -> dict[str, Any]:
        """Returns the public PROTOCOL.md "State": no seed, no generator position (without `ink`: its
        `ink` left an empty list, in its place, for a caller that writes the lines' JSON itself).

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
            "ink": [line.to_json() for line in self.ink] if ink else [],
            "convoys": [c.to_json() for c in self.convoys],
            "setup": {
                "bases_drawn": {"blue": blue_bases, "red": len(self.bases) - blue_bases},
                "ready": {"blue": self.ready[0], "red": self.ready[1]},
            },
            "winner": self.winner,
            "end_reason": self.end_reason,
        }

    def to_json(self, *, ink: bool = True) -> dict[str, Any]:
        """Returns the snapshot plus the seed (32 hex digits) and generator position: private, exact
        (without `ink`: as `snapshot`'s, its `ink` left empty, the server's checkpoint text keeping each
        line's JSON from one checkpoint to the next).

        >>> from dotfight.engine import RuleSet, new_page
        >>> data = new_page(RuleSet.preset("quick"), seed=255).to_json()
        >>> data["seed"], data["rng"]
        ('000000000000000000000000000000ff', 0)
        """
        data = self.snapshot(ink=ink)
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
            return cls(**state_fields(data))
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


_FIELD_NAMES = frozenset(f.name for f in fields(State))
# Caches that stay valid as long as the soldiers' and bases' ids do not change.
_INDEX_CACHES = ("soldier_index", "base_index", "base_arrays")
# Caches that stay valid as long as the soldiers tuple is the same.
_SOLDIER_CACHES = ("roster",)
# Instance-dictionary key of an earlier state's arrays, from which this state's are patched when first used.
_EARLIER_ARRAYS = "_earlier_arrays"
# Everything a state's dictionary may hold besides its fields (tests/engine/test_state_memory.py checks
# that this names every cached view of State).
_CACHES = (*_INDEX_CACHES, *_SOLDIER_CACHES, "arrays", _EARLIER_ARRAYS)


_set_dict = object.__setattr__


def evolve(state: State, **changes: Any) -> State:
    """Returns a copy of the state with the named fields changed (no validation: rules modules only).

    Copies the instance dictionary directly, which is several times faster than `dataclasses.replace`
    on a hot path, and keeps the derived caches: the id indexes while the bases stay, and the hot
    paths' arrays, which the new state patches lazily (only for soldiers that are new objects) on
    first use.
    """
    new_dict = state.__dict__.copy()  # the fields and the views (one C-level copy), then the changes
    new_dict.update(changes)
    new = object.__new__(State)
    _set_dict(new, "__dict__", new_dict)  # the frozen class's own __setattr__ refuses any name
    if len(new_dict) == len(_FIELD_NAMES):
        return new  # no view to carry
    if "bases" in changes:
        for cache in _CACHES:
            new_dict.pop(cache, None)
    elif "soldiers" in changes:
        new_dict.pop("roster", None)
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
    return State(rules=shared_rules(rules), seed=check_seed(seed))
