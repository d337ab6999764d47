"""Reading a page back from `State.to_json()`: every field checked, every number finite, every word
one of the rules' (the value types write themselves; this is the only way back).

`state_fields` returns the fields of the `State` the JSON describes; `State.from_json` makes the state
from them and turns a missing key or a wrong shape into ValueError.
"""

from __future__ import annotations

import math
import sys
from typing import Any, cast

from .errors import quoted
from .interning import shared_rules
from .rng import seed_from_hex
from .rules import RuleSet
from .values import END_REASONS, PHASES, Base, Chain, Convoy, Cross, Ink, Phase, Side, Soldier, Turn


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


def state_fields(data: object) -> dict[str, Any]:
    """Returns the fields of the state `data` (a `State.to_json()` output) describes, by name; raises
    ValueError on a bad value, and KeyError, TypeError, AttributeError or IndexError on a bad shape.

    >>> from dotfight.engine import RuleSet, new_page
    >>> fields = state_fields(new_page(RuleSet.preset("quick"), seed=255).to_json())
    >>> fields["seed"], fields["phase"], fields["soldiers"]
    (255, 'bases', ())
    """
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
    return dict(
        rules=shared_rules(RuleSet.from_json(data["rules"])),
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
