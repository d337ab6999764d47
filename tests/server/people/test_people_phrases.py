"""Phrases (dotfight/server/people/phrases.py): the fixed list and the cap per side."""

from __future__ import annotations

import pytest

from dotfight.server.people.phrases import (
    PHRASE_CAP_PER_SIDE,
    PHRASES,
    TooManyPhrases,
    UnknownPhrase,
    check_cap,
    parse_phrase,
)


def test_the_list_is_protocols() -> None:
    assert PHRASES == ("hello", "good_luck", "have_fun", "nice_shot", "well_played", "thanks", "good_game")
    assert [parse_phrase(phrase) for phrase in PHRASES] == list(PHRASES)


@pytest.mark.parametrize("bad", ["gg", "Good_game", "good_game ", "", None, 3, ["hello"]])
def test_another_phrase_is_a_bad_request(bad: object) -> None:
    with pytest.raises(UnknownPhrase) as refused:
        parse_phrase(bad)
    assert isinstance(refused.value, ValueError) and refused.value.code == "bad_request"


def test_over_the_cap_is_rate_limited() -> None:
    check_cap(PHRASE_CAP_PER_SIDE - 1)
    with pytest.raises(TooManyPhrases) as refused:
        check_cap(PHRASE_CAP_PER_SIDE)
    assert refused.value.code == "rate_limited" and PHRASE_CAP_PER_SIDE == 20
