"""The page's pieces made by `values.quick_init` are the dataclasses they were: the same fields, defaults,
equality, hashing, `dataclasses.replace`, pickling and frozenness; and it refuses what it cannot make."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from dotfight.engine.actions import Flick
from dotfight.engine.values import Chain, Cross, Ink, Soldier, Turn, quick_init


def test_pieces_made_quickly_are_the_dataclasses_they_were() -> None:
    turn = Turn("blue", 3, 1, Chain("b1s1", 2, 1), last_stand=True)
    assert (turn.side, turn.number, turn.flicks_left, turn.chain, turn.sent, turn.last_stand) == (
        "blue", 3, 1, Chain("b1s1", 2, 1), False, True,
    )  # fmt: skip
    assert turn.flicked is False and Soldier("b1s1", "blue", 1.0, 2.0).cross is None
    assert dataclasses.replace(turn, sent=True) == Turn("blue", 3, 1, Chain("b1s1", 2, 1), True, True)
    assert hash(turn) == hash(Turn("blue", 3, 1, Chain("b1s1", 2, 1), last_stand=True))
    ink = Ink("red", "snipe", "b2s1", ((1.0, 2.0), (3.0, 4.0)), 0.5, 300.0)
    for piece in (turn, ink, Cross("b1s1", "snipe", "blue"), Flick("b1s1", "lunge", (0.0, 40.0))):
        assert pickle.loads(pickle.dumps(piece)) == piece
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(piece, dataclasses.fields(piece)[0].name, "red")
    with pytest.raises(TypeError):
        Turn("blue", 3)  # type: ignore[call-arg]


def test_quick_init_refuses_fields_it_cannot_make() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Listed:
        items: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            pass

    for cls in (Listed, Checked):
        with pytest.raises(TypeError, match="plain fields only"):
            quick_init(cls)
