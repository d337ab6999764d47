"""The rule parameters: every number of RULES.md as one named, typed, validated field of `RuleSet`."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, overload

from .errors import RuleSetError, quoted
from .jotting import min_spacing_radius
from .rng import CLIP

PRESET_NAMES = ("classic", "quick", "dawood", "custom")

# The whole-number parameters; every other number is a float.
INT_FIELDS = frozenset(
    {"bases_per_side", "soldiers_per_base", "send_max", "last_stand_at", "last_stand_flicks"}
)

# Bounds on army size (RULES.md §2, Custom: 1–8 bases of 1–20 soldiers) apply to every preset.
MAX_BASES_PER_SIDE = 8
MAX_SOLDIERS_PER_BASE = 20
# A page a hundred times the exercise book's is still a page; beyond that the numbers only overflow.
MAX_PAGE_SIDE = 100_000.0
# More flicks than this in a last stand is not a steadier hand but another game.
MAX_LAST_STAND_FLICKS = 10
# A shake draw is a standard normal clipped at ±3 (rng.CLIP): the book's degrees are at least one spread
# and at most the largest deflection a draw can give.
MIN_SHAKE_SIGMAS = 1.0
MAX_SHAKE_SIGMAS = CLIP


class _PresetAccess:
    """`RuleSet.preset(name, **overrides)` builds a preset; `rules.preset` is the preset's name.

    The rule book's JSON names the label `preset`, and the documented constructor is also
    `RuleSet.preset`, so this descriptor answers differently on the class and on an instance.
    """

    @overload
    def __get__(self, obj: None, owner: type[RuleSet]) -> _PresetFactory: ...

    @overload
    def __get__(self, obj: RuleSet, owner: type[RuleSet]) -> str: ...

    def __get__(self, obj: RuleSet | None, owner: type[RuleSet]) -> _PresetFactory | str:
        if obj is None:
            return _PresetFactory()
        return obj.preset_name


class _PresetFactory:
    """Callable returned by `RuleSet.preset`."""

    def __call__(self, name: str = "classic", **overrides: Any) -> RuleSet:
        """Returns the named preset with `overrides` applied (validated).

        >>> from dotfight.engine import RuleSet
        >>> RuleSet.preset("dawood").bases_per_side
        5
        >>> RuleSet.preset("quick", wildness=0).wildness
        0.0
        """
        return RuleSet.preset_named(name, **overrides)


@dataclass(frozen=True)
class RuleSet:
    """Every rule number of RULES.md; frozen, validated on construction, exact through JSON.

    >>> from dotfight.engine import RuleSet
    >>> RuleSet.preset("quick").bases_per_side
    3
    >>> rules = RuleSet.preset("quick", wildness=0)
    >>> rules.preset, rules.wildness, rules.soldiers_per_base
    ('quick', 0.0, 8)

    A value that makes no sense is refused with a `RuleSetError` naming the field:

    >>> from dotfight.engine import RuleSetError
    >>> try:
    ...     RuleSet.preset("classic", bases_per_side=9)
    ... except RuleSetError as refusal:
    ...     print(refusal.code, refusal.reason, refusal.field, refusal.value)
    ...     print(refusal)
    bad_request bad_rules bases_per_side 9
    rule bases_per_side=9: must lie between 1 and 8
    """

    preset = _PresetAccess()
    preset_name: str = "classic"
    # §1 the page
    page_width: float = 1000.0
    page_height: float = 1400.0
    dot_radius: float = 7.0
    outside_margin: float = 20.0
    base_radius_min: float = 40.0
    base_radius_max: float = 100.0
    base_gap: float = 30.0
    # §2 setup
    bases_per_side: int = 4
    soldiers_per_base: int = 8
    # §4 flicking
    pull_max: float = 300.0
    reach_min_frac: float = 0.2
    reach_curve: float = 2.0
    # §4 calibrated by the lab (docs/RULES-NOTES.md, "Calibration"; RULES.md's provisional 0.10 and 2):
    # the spread of a full-power flick, the spread at the softest power, and its curve
    wildness: float = 0.06
    wildness_soft: float = 0.0
    wildness_curve: float = 3.0
    # §5 snipe
    wall_loss_empty: float = 0.03
    wall_loss_full: float = 0.85
    man_loss: float = 0.05
    # §6 lunge
    shake_empty: float = 0.0175
    shake_full: float = 0.995
    shake_man: float = 0.04
    lunge_link_shake: float = 0.05
    # §6 calibrated by the lab: how many standard deviations the book's degrees of wall and man shake are
    shake_sigmas: float = 3.0
    # §7 send
    send_max: int = 5
    # §9 last stand
    last_stand_at: int = 4
    last_stand_flicks: int = 2
    last_stand_steady: float = 0.5

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            object.__setattr__(self, field.name, _coerce(field.name, value))
        _check(self)

    @cached_property  # asked several times a flick; a RuleSet never changes
    def diagonal(self) -> float:
        """The longest line on the page, `D = hypot(page_width, page_height)`.

        >>> round(RuleSet.preset("classic").diagonal, 1)
        1720.5
        """
        return math.hypot(self.page_width, self.page_height)

    @property
    def half_y(self) -> float:
        """The line between the halves: blue owns y ≥ half_y, red y ≤ half_y.

        >>> RuleSet.preset("classic").half_y
        700.0
        """
        return self.page_height / 2

    @classmethod
    def preset_named(cls, name: str, **overrides: Any) -> RuleSet:
        """Returns the named preset with `overrides` applied (validated); `RuleSet.preset` calls this.

        >>> RuleSet.preset_named("quick").bases_per_side
        3
        >>> RuleSet.preset_named("blitz")
        Traceback (most recent call last):
        ...
        dotfight.engine.errors.RuleSetError: rule preset='blitz': unknown preset; expected one of ...
        """
        if name not in PRESETS:
            raise RuleSetError("preset", name, f"unknown preset; expected one of {', '.join(PRESET_NAMES)}")
        return PRESETS[name].replace(**overrides)

    def replace(self, **overrides: Any) -> RuleSet:
        """Returns a validated copy with the named fields changed; unknown names are refused.

        >>> rules = RuleSet.preset("quick")
        >>> rules.replace(send_max=3).send_max, rules.send_max
        (3, 5)
        >>> rules.replace(colour="red")
        Traceback (most recent call last):
        ...
        dotfight.engine.errors.RuleSetError: rule colour='red': unknown rule parameter
        """
        known = {_json_name(field.name) for field in fields(self)}
        changes: dict[str, Any] = {}
        for name, value in overrides.items():
            if name not in known:
                raise RuleSetError(name, value, "unknown rule parameter")
            changes["preset_name" if name == "preset" else name] = value
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """Returns every field by name; `RuleSet.from_json` gives back an equal RuleSet.

        >>> import json
        >>> rules = RuleSet.preset("quick", send_max=3)
        >>> data = rules.to_json()
        >>> data["preset"], data["bases_per_side"], data["send_max"]
        ('quick', 3, 3)
        >>> RuleSet.from_json(json.loads(json.dumps(data))) == rules
        True
        """
        return {**self._json}  # a copy: callers may write theirs

    @cached_property
    def _json(self) -> dict[str, Any]:
        """`to_json`'s fields, worked out once (every checkpoint of every page writes them)."""
        return {name: getattr(self, attribute) for name, attribute in _JSON_NAMES}

    @classmethod
    def from_json(cls, data: object) -> RuleSet:
        """Builds a RuleSet from `to_json()` output (stored rules); missing fields come from the named
        preset, except the calibration fields, which take their legacy values (`legacy_values`) so that
        rules stored before those fields existed replay exactly as they were played.

        >>> rules = RuleSet.from_json({"preset": "dawood", "send_max": 2, "reach_curve": 3})
        >>> rules.bases_per_side, rules.send_max
        (5, 2)
        >>> rules.wildness_soft, rules.wildness_curve, rules.shake_sigmas  # as before they existed
        (0.0, 3.0, 1.0)
        >>> RuleSet.from_json({"preset": "quick", "wildness": -1})
        Traceback (most recent call last):
        ...
        dotfight.engine.errors.RuleSetError: rule wildness=-1.0: must not be negative
        """
        if not isinstance(data, dict):
            raise RuleSetError("rules", data, "expected an object of rule parameters")
        preset = data.get("preset", "classic")
        if not isinstance(preset, str) or preset not in PRESETS:
            raise RuleSetError("preset", preset, f"unknown preset; expected one of {', '.join(PRESET_NAMES)}")
        given = {str(k): v for k, v in data.items()}
        return PRESETS[preset].replace(
            **{**legacy_values(given.get("reach_curve", PRESETS[preset].reach_curve)), **given}
        )


def legacy_values(reach_curve: object) -> dict[str, object]:
    """Returns the calibration fields' values from before they existed: no spread at the softest power,
    a wildness growing with the reach's own curve, and the book's degrees read as one spread.

    >>> legacy_values(2.0)
    {'wildness_soft': 0.0, 'wildness_curve': 2.0, 'shake_sigmas': 1.0}
    """
    return {"wildness_soft": 0.0, "wildness_curve": reach_curve, "shake_sigmas": 1.0}


def _json_name(field_name: str) -> str:
    """The rule book's name of a field: the preset label is `preset` on the wire."""
    return "preset" if field_name == "preset_name" else field_name


# (wire name, attribute) of every field in order: `to_json` runs on every checkpoint of every page.
_JSON_NAMES = tuple((_json_name(field.name), field.name) for field in fields(RuleSet))


def _coerce(name: str, value: object) -> object:
    """Checks one field's type; ints become floats in float fields so JSON round trips are exact."""
    if name == "preset_name":
        if not isinstance(value, str) or value not in PRESET_NAMES:
            raise RuleSetError("preset", value, f"expected one of {', '.join(PRESET_NAMES)}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RuleSetError(name, value, "expected a number")
    if name in INT_FIELDS:
        if isinstance(value, float):
            if not value.is_integer():
                raise RuleSetError(name, value, "expected a whole number")
            return int(value)
        return value
    try:
        result = float(value)
    except OverflowError:  # an int too large for a float
        result = math.inf
    if not math.isfinite(result):
        raise RuleSetError(name, value, "expected a finite number")
    return result


def _require(ok: bool, name: str, value: object, problem: str) -> None:
    if not ok:
        raise RuleSetError(name, value, problem)


def _check(rules: RuleSet) -> None:
    """Refuses parameter values that make no sense, naming the field and value."""
    r = rules
    for name in ("page_width", "page_height", "dot_radius", "base_radius_min", "base_radius_max", "pull_max"):
        _require(getattr(r, name) > 0, name, getattr(r, name), "must be greater than 0")
    for name in ("page_width", "page_height"):
        _require(
            getattr(r, name) <= MAX_PAGE_SIDE, name, getattr(r, name), f"must not exceed {MAX_PAGE_SIDE:g}"
        )
    for name in ("dot_radius", "outside_margin", "base_gap", "pull_max"):
        _require(getattr(r, name) <= r.diagonal, name, getattr(r, name), "must not exceed the page diagonal")
    for name in (
        "outside_margin",
        "base_gap",
        "wildness",
        "wildness_soft",
        "shake_empty",
        "shake_full",
        "shake_man",
        "lunge_link_shake",
        "last_stand_steady",
    ):
        _require(getattr(r, name) >= 0, name, getattr(r, name), "must not be negative")
    for name in ("wildness", "wildness_soft", "shake_empty", "shake_full", "shake_man", "lunge_link_shake"):
        _require(
            getattr(r, name) <= math.pi, name, getattr(r, name), "a spread above π radians means nothing"
        )
    for name in ("wall_loss_empty", "wall_loss_full", "man_loss"):
        _require(0 <= getattr(r, name) <= 1, name, getattr(r, name), "a loss must lie between 0 and 1")
    _require(0 < r.reach_min_frac <= 1, "reach_min_frac", r.reach_min_frac, "must lie in (0, 1]")
    _require(r.reach_curve > 0, "reach_curve", r.reach_curve, "must be greater than 0")
    _require(r.wildness_curve > 0, "wildness_curve", r.wildness_curve, "must be greater than 0")
    _require(
        r.wildness_soft <= r.wildness,
        "wildness_soft",
        r.wildness_soft,
        f"the softest flick is not wilder than the hardest (wildness={quoted(r.wildness)})",
    )
    _require(
        MIN_SHAKE_SIGMAS <= r.shake_sigmas <= MAX_SHAKE_SIGMAS,
        "shake_sigmas",
        r.shake_sigmas,
        f"must lie between {MIN_SHAKE_SIGMAS:g} (the degrees are one spread) and {MAX_SHAKE_SIGMAS:g} "
        "(the degrees are the largest deflection a draw can give)",
    )
    _require(
        1 <= r.bases_per_side <= MAX_BASES_PER_SIDE,
        "bases_per_side",
        r.bases_per_side,
        f"must lie between 1 and {MAX_BASES_PER_SIDE}",
    )
    _require(
        1 <= r.soldiers_per_base <= MAX_SOLDIERS_PER_BASE,
        "soldiers_per_base",
        r.soldiers_per_base,
        f"must lie between 1 and {MAX_SOLDIERS_PER_BASE}",
    )
    _require(r.send_max >= 0, "send_max", r.send_max, "must not be negative")
    _require(r.last_stand_at >= 0, "last_stand_at", r.last_stand_at, "must not be negative")
    _require(
        1 <= r.last_stand_flicks <= MAX_LAST_STAND_FLICKS,
        "last_stand_flicks",
        r.last_stand_flicks,
        f"must lie between 1 and {MAX_LAST_STAND_FLICKS}",
    )
    _require(
        r.base_radius_min <= r.base_radius_max,
        "base_radius_min",
        r.base_radius_min,
        f"must not exceed base_radius_max={quoted(r.base_radius_max)}",
    )
    _require(
        2 * r.base_radius_min <= min(r.page_width, r.page_height / 2),
        "base_radius_min",
        r.base_radius_min,
        "no base that small fits in a half of the page",
    )
    needed = min_spacing_radius(r.soldiers_per_base, r.dot_radius)
    _require(
        needed <= r.base_radius_min,
        "soldiers_per_base",
        r.soldiers_per_base,
        f"{r.soldiers_per_base} dots of dot_radius={quoted(r.dot_radius)} do not fit in a base of "
        f"base_radius_min={quoted(r.base_radius_min)} (needs radius {needed:.1f})",
    )


PRESETS: dict[str, RuleSet] = {
    "classic": RuleSet(preset_name="classic"),
    "quick": RuleSet(preset_name="quick", bases_per_side=3, soldiers_per_base=8),
    "dawood": RuleSet(preset_name="dawood", bases_per_side=5, soldiers_per_base=10),
    "custom": RuleSet(preset_name="custom"),
}
