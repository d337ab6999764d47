"""The page's value types: the sides and phases, and the frozen pieces a `State` is made of — bases,
soldiers and their crosses, the turn and its chain, convoys and ink — each with the JSON the snapshot
writes (the way back is engine/codec.py).

They are plain frozen values with slots (no instance dictionary: a server holds thousands of pages), and
know nothing of the page they stand on.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, TypeVar

from .geometry import Circle

Side = Literal["blue", "red"]
Phase = Literal["bases", "positioning", "play", "over"]
SIDES: tuple[Side, Side] = ("blue", "red")
PHASES: tuple[Phase, ...] = ("bases", "positioning", "play", "over")
END_REASONS = ("all_crossed_out", "resigned", "time", "abandoned")

Event = dict[str, Any]


_Value = TypeVar("_Value")


def quick_init(cls: type[_Value]) -> type[_Value]:
    """Gives a frozen, slotted dataclass an `__init__` that stores each field through its slot's own
    descriptor: the same values as dataclass's own `__init__` (which goes through
    `object.__setattr__`, field by field), made in half the time — a flick makes several of the page's
    pieces (its turns, its ink, the action). Fields with a plain default keep it.

    >>> Chain("b1s1", 2, 1) == Chain(soldier="b1s1", credits=2, link=1), Turn("blue", 1, 1).sent
    (True, False)
    """
    declared = fields(cls)  # type: ignore[arg-type]
    if hasattr(cls, "__post_init__") or any(f.default_factory is not MISSING for f in declared):
        raise TypeError(f"{cls.__name__}: quick_init makes plain fields only")
    names = [field.name for field in declared]
    defaults = {f.name: f.default for f in declared if f.default is not MISSING}
    namespace: dict[str, Any] = {f"_set_{name}": getattr(cls, name).__set__ for name in names}
    namespace.update({f"_default_{name}": value for name, value in defaults.items()})
    params = ", ".join(f"{name}=_default_{name}" if name in defaults else name for name in names)
    body = "".join(f"    _set_{name}(self, {name})\n" for name in names)
    exec(f"def __init__(self, {params}):\n{body}", namespace)  # built from the field names alone
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


def other_side(side: Side) -> Side:
    """Returns the opposing side.

    >>> other_side("blue"), other_side("red")
    ('red', 'blue')
    """
    return "red" if side == "blue" else "blue"


def side_index(side: Side) -> int:
    """Returns 0 for blue and 1 for red (index into per-side pairs)."""
    return 0 if side == "blue" else 1


@quick_init
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


@quick_init
@dataclass(frozen=True, slots=True)
class Cross:
    """How a soldier was crossed out: by whom, why, and the colour of the cross."""

    by: str
    cause: str
    side: Side

    def to_json(self) -> dict[str, Any]:
        """Returns the cross as the snapshot writes it."""
        return {"by": self.by, "cause": self.cause, "side": self.side}


@quick_init
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


@quick_init
@dataclass(frozen=True, slots=True)
class Chain:
    """A pending lunge-again chain: the soldier, his lunges left, and the number of his next link."""

    soldier: str
    credits: int
    link: int

    def to_json(self) -> dict[str, Any]:
        """Returns the chain as the snapshot writes it."""
        return {"soldier": self.soldier, "credits": self.credits, "link": self.link}


@quick_init
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


@quick_init
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


@quick_init
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
