"""Phrases: the short fixed list a player may say to the other (issue 19), and the cap per side.

No free text, so nothing to moderate (as lichess offers anonymous players its canned phrases). Phrases
are kept with the page but are not actions: they never change its version.

>>> parse_phrase("good_game")
'good_game'
>>> check_cap(said_by_side=PHRASE_CAP_PER_SIDE)
Traceback (most recent call last):
...
dotfight.server.people.phrases.TooManyPhrases: a side may say at most 20 phrases on a page
"""

from __future__ import annotations

from typing import Literal, get_args

from .errors import PeopleError

__all__ = [
    "PHRASES",
    "PHRASE_CAP_PER_SIDE",
    "Phrase",
    "TooManyPhrases",
    "UnknownPhrase",
    "check_cap",
    "parse_phrase",
]

Phrase = Literal["hello", "good_luck", "have_fun", "nice_shot", "well_played", "thanks", "good_game"]
PHRASES: tuple[Phrase, ...] = get_args(Phrase)
# Enough for a greeting, a few "nice shot"s over a long page and the goodbyes; few enough that phrases
# cannot be used to flood the other phone.
PHRASE_CAP_PER_SIDE = 20


class UnknownPhrase(PeopleError):
    """A phrase not on the list (`bad_request`)."""

    def __init__(self, message: str) -> None:
        super().__init__("bad_request", "unknown_phrase", message)


class TooManyPhrases(PeopleError):
    """A side over its cap on this page (`rate_limited`)."""

    def __init__(self, message: str) -> None:
        super().__init__("rate_limited", "too_many_phrases", message)


def parse_phrase(raw: object) -> Phrase:
    """Returns the phrase if it is one of `PHRASES`; raises `UnknownPhrase` for anything else.

    >>> parse_phrase("you are bad")
    Traceback (most recent call last):
    ...
    dotfight.server.people.phrases.UnknownPhrase: phrase must be one of hello, good_luck, ..., good_game
    """
    if not isinstance(raw, str) or raw not in PHRASES:
        raise UnknownPhrase(f"phrase must be one of {', '.join(PHRASES)}")
    return raw


def check_cap(said_by_side: int) -> None:
    """Refuses (`TooManyPhrases`) one more phrase from a side that has said `said_by_side` on the page."""
    if said_by_side >= PHRASE_CAP_PER_SIDE:
        raise TooManyPhrases(f"a side may say at most {PHRASE_CAP_PER_SIDE} phrases on a page")
