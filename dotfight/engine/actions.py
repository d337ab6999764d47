"""Parsing PROTOCOL.md actions: anything that is not a well-formed action is refused here.

Only shape is judged here (types, finite numbers in range, known ids, no extra fields), and a refusal is
always `MalformedAction` (code "bad_request"). Whether a well-formed action is allowed now is the rules
modules' question (`IllegalAction`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import MalformedAction, quoted
from .state import State
from .values import Side, quick_init


@dataclass(frozen=True)
class DrawBase:
    """`draw_base`: a circle at (x, y) of radius r."""

    x: float
    y: float
    r: float


@dataclass(frozen=True)
class QuickSetup:
    """`quick_setup`: a fair mirrored set of bases for both sides, jotted."""


@dataclass(frozen=True)
class Position:
    """`position`: new places for some of the arranging side's soldiers."""

    soldiers: tuple[tuple[str, float, float], ...]


@dataclass(frozen=True)
class Ready:
    """`ready`: the arranging side's arrangement is final."""


@quick_init  # one a flick
@dataclass(frozen=True, slots=True)
class Flick:
    """`flick`: one soldier snipes or lunges along `vector` (the direction the ink goes)."""

    soldier: str
    kind: str
    vector: tuple[float, float]


@dataclass(frozen=True)
class Send:
    """`send`: soldiers walk from one base to another of their side."""

    source: str
    to: str
    soldiers: tuple[str, ...]


@dataclass(frozen=True)
class Stop:
    """`stop`: ends a pending chain, or the turn."""


@dataclass(frozen=True)
class Resign:
    """`resign`: the acting side gives up the page."""


@dataclass(frozen=True)
class TimeOut:
    """`time_out`: the acting side's time ran out (only the server writes it, never a client)."""


@dataclass(frozen=True)
class Abandon:
    """`abandon`: the acting side left a live page (only the server writes it, never a client)."""


Action = DrawBase | QuickSetup | Position | Ready | Flick | Send | Stop | Resign | TimeOut | Abandon

# Actions only the server writes: the engine applies them like `resign`, a client may never send them.
SERVER_ONLY_ACTIONS = frozenset({"time_out", "abandon"})

_FIELDS: dict[str, frozenset[str]] = {
    "draw_base": frozenset({"type", "x", "y", "r"}),
    "quick_setup": frozenset({"type"}),
    "position": frozenset({"type", "soldiers"}),
    "ready": frozenset({"type"}),
    "flick": frozenset({"type", "soldier", "kind", "vector"}),
    "send": frozenset({"type", "from", "to", "soldiers"}),
    "stop": frozenset({"type"}),
    "resign": frozenset({"type"}),
    "time_out": frozenset({"type"}),
    "abandon": frozenset({"type"}),
}
# The actions a player makes, named when an unknown one is refused (the server's own are not offered).
_PLAYED = tuple(kind for kind in _FIELDS if kind not in SERVER_ONLY_ACTIONS)
KINDS = ("snipe", "lunge")


def parse_side(side: object) -> Side:
    """Returns the acting side, refusing anything but "blue" or "red".

    >>> parse_side("red")
    'red'
    >>> parse_side("green")
    Traceback (most recent call last):
    ...
    dotfight.engine.errors.MalformedAction: the acting side must be 'blue' or 'red', got 'green'
    """
    if side == "blue" or side == "red":
        return side
    raise MalformedAction("bad_side", f"the acting side must be 'blue' or 'red', got {quoted(side)}")


def parse_action(state: State, action: object) -> Action:
    """Returns the typed action, or raises MalformedAction naming what is wrong with its shape.

    >>> from dotfight.engine import MalformedAction, RuleSet, new_page
    >>> page = new_page(RuleSet.preset("quick"), seed=7)
    >>> parse_action(page, {"type": "draw_base", "x": 500, "y": 1100, "r": 80})
    DrawBase(x=500.0, y=1100.0, r=80.0)
    >>> try:
    ...     parse_action(page, {"type": "draw_base", "x": 500, "y": float("nan"), "r": 80})
    ... except MalformedAction as refusal:
    ...     print(refusal.code, refusal.reason)
    bad_request not_finite
    """
    if not isinstance(action, dict):
        raise MalformedAction(
            "not_an_object", f"an action must be a JSON object, got {type(action).__name__}"
        )
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise MalformedAction(
            "unknown_action", f"unknown action type {quoted(kind)}; expected one of {', '.join(_PLAYED)}"
        )
    _exact_fields(action, _FIELDS[kind], kind)
    if kind == "flick":  # first: nearly every action of a page in play
        return Flick(
            _soldier_id(state, action["soldier"], "soldier"),
            _kind(action["kind"]),
            _vector(state, action["vector"]),
        )
    if kind == "draw_base":
        return DrawBase(
            _coordinate(state, action, "x"), _coordinate(state, action, "y"), _length(state, action, "r")
        )
    if kind == "quick_setup":
        return QuickSetup()
    if kind == "position":
        return Position(_positions(state, action["soldiers"]))
    if kind == "ready":
        return Ready()
    if kind == "send":
        return Send(
            _base_id(state, action["from"], "from"),
            _base_id(state, action["to"], "to"),
            _soldier_ids(state, action["soldiers"]),
        )
    if kind == "stop":
        return Stop()
    if kind == "time_out":
        return TimeOut()
    if kind == "abandon":
        return Abandon()
    return Resign()


def _exact_fields(action: dict[Any, Any], allowed: frozenset[str], kind: str) -> None:
    if action.keys() == allowed:
        return  # the usual case, asked at C speed
    keys = set(action)
    missing = allowed - keys
    if missing:
        raise MalformedAction("missing_field", f"{kind} needs the field(s) {', '.join(sorted(missing))}")
    extra = keys - allowed
    if extra:
        names = ", ".join(sorted(repr(k) for k in extra))
        raise MalformedAction("unknown_field", f"{kind} has unknown field(s) {names}")


def _number(value: object, name: str) -> float:
    if type(value) is float and math.isfinite(value):
        return value  # the usual case (JSON's numbers with a point): nothing to convert or refuse
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedAction("not_a_number", f"{name} must be a number, got {quoted(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise MalformedAction("not_finite", f"{name} must be finite, got {quoted(value)}")
    return number


def _coordinate(state: State, data: dict[str, Any], name: str) -> float:
    """A page coordinate; a point more than a diagonal off the page is nonsense, not a bad move."""
    value = _number(data[name], name)
    rules = state.rules
    top = rules.page_width if name == "x" else rules.page_height
    if not -rules.diagonal <= value <= top + rules.diagonal:
        raise MalformedAction(
            "out_of_range", f"{name}={quoted(value)} is more than a page diagonal off the page"
        )
    return value


def _length(state: State, data: dict[str, Any], name: str) -> float:
    value = _number(data[name], name)
    if abs(value) > state.rules.diagonal:
        raise MalformedAction("out_of_range", f"{name}={quoted(value)} is longer than the page diagonal")
    return value


def _kind(value: object) -> str:
    if value not in KINDS:
        raise MalformedAction("unknown_kind", f"kind must be 'snipe' or 'lunge', got {quoted(value)}")
    return str(value)


def _vector(state: State, value: object) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise MalformedAction("bad_vector", f"vector must be [dx, dy], got {quoted(value)}")
    dx, dy = _number(value[0], "vector dx"), _number(value[1], "vector dy")
    limit = state.rules.diagonal
    if abs(dx) > limit or abs(dy) > limit:
        raise MalformedAction("out_of_range", f"vector {[dx, dy]!r} has a component beyond ±{limit:.1f}")
    return dx, dy


def _soldier_id(state: State, value: object, name: str) -> str:
    if not isinstance(value, str):
        raise MalformedAction("bad_id", f"{name} must be a soldier id string, got {quoted(value)}")
    if value not in state.soldier_index:
        raise MalformedAction("unknown_soldier", f"there is no soldier {quoted(value)} on this page")
    return value


def _base_id(state: State, value: object, name: str) -> str:
    if not isinstance(value, str):
        raise MalformedAction("bad_id", f"{name} must be a base id string, got {quoted(value)}")
    if value not in state.base_index:
        raise MalformedAction("unknown_base", f"there is no base {quoted(value)} on this page")
    return value


def _list(value: object, name: str, limit: int) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise MalformedAction("bad_list", f"{name} must be a list, got {type(value).__name__}")
    if len(value) > limit:
        raise MalformedAction(
            "too_many", f"{name} lists {len(value)} entries; this page has {limit} soldiers"
        )
    return list(value)


def _soldier_ids(state: State, value: object) -> tuple[str, ...]:
    ids = [_soldier_id(state, item, "soldiers[]") for item in _list(value, "soldiers", len(state.soldiers))]
    if len(set(ids)) != len(ids):
        raise MalformedAction("duplicate_soldier", "a soldier is named twice in soldiers")
    return tuple(ids)


def _positions(state: State, value: object) -> tuple[tuple[str, float, float], ...]:
    places: list[tuple[str, float, float]] = []
    for item in _list(value, "soldiers", len(state.soldiers)):
        if not isinstance(item, dict):
            raise MalformedAction("bad_position", f"each position must be {{id, x, y}}, got {quoted(item)}")
        _exact_fields(item, frozenset({"id", "x", "y"}), "a position")
        places.append(
            (
                _soldier_id(state, item["id"], "id"),
                _coordinate(state, item, "x"),
                _coordinate(state, item, "y"),
            )
        )
    if len({p[0] for p in places}) != len(places):
        raise MalformedAction("duplicate_soldier", "a soldier is named twice in soldiers")
    return tuple(places)
