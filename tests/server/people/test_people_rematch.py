"""Rematch (dotfight/server/people/rematch.py): an offer's life, and what the rematch copies."""

from __future__ import annotations

import json

import pytest

from dotfight.engine import Side
from dotfight.server.people.clock import LinkClock, LiveClock
from dotfight.server.people.rematch import (
    OFFER_LIFETIME_S,
    OldPage,
    RematchError,
    RematchState,
    made,
    offer,
    rematch_command,
    standing,
    withdraw,
)


def test_either_seat_offers_and_the_other_accepting_makes_the_rematch() -> None:
    pairs: list[tuple[Side, Side]] = [("blue", "red"), ("red", "blue")]
    for first, second in pairs:
        state, make = offer(RematchState(), seat=first, mode="link", finished=True, now=0.0)
        assert (state.offered_by, make) == (first, False)
        again, make = offer(state, seat=first, mode="link", finished=True, now=5.0)
        assert (again, make) == (state, False)  # a repeated offer changes nothing
        accepted, make = offer(state, seat=second, mode="link", finished=True, now=10.0)
        assert make and accepted.offered_by == first
        done = made(accepted, "new")
        assert standing(done, "link", 1e9) == {"offered_by": first, "page": "new"}
        assert offer(done, seat=second, mode="link", finished=True, now=11.0) == (done, False)


def test_watchers_never_offer_and_a_page_in_play_has_no_rematch() -> None:
    with pytest.raises(RematchError) as watcher:
        offer(RematchState(), seat=None, mode="live", finished=True, now=0.0)
    assert watcher.value.code == "bad_token"
    with pytest.raises(RematchError) as playing:
        offer(RematchState(), seat="blue", mode="live", finished=False, now=0.0)
    assert (playing.value.code, playing.value.reason) == ("illegal_action", "page_in_play")
    with pytest.raises(RematchError):
        withdraw(RematchState(), seat=None)


def test_withdraw_and_decline_clear_the_offer_but_not_a_made_rematch() -> None:
    state, _ = offer(RematchState(), seat="blue", mode="live", finished=True, now=0.0)
    assert withdraw(state, seat="blue") == RematchState()
    assert withdraw(state, seat="red") == RematchState()
    assert withdraw(RematchState(), seat="red") == RematchState()
    with pytest.raises(RematchError) as refused:
        withdraw(made(state, "new"), seat="red")
    assert refused.value.reason == "rematch_made"


@pytest.mark.parametrize("mode", ["live", "link"])
def test_an_offer_expires_after_its_lifetime(mode: str) -> None:
    lifetime = OFFER_LIFETIME_S[mode]
    state, _ = offer(RematchState(), seat="blue", mode=mode, finished=True, now=0.0)
    assert standing(state, mode, lifetime - 1)["offered_by"] == "blue"
    assert standing(state, mode, lifetime)["offered_by"] is None
    late, make = offer(state, seat="red", mode=mode, finished=True, now=lifetime)
    assert (late.offered_by, late.offered_at, make) == (
        "red",
        lifetime,
        False,
    )  # a new offer, not an acceptance


def test_an_offer_survives_a_restart() -> None:
    state, _ = offer(RematchState(), seat="red", mode="link", finished=True, now=12.5)
    assert RematchState.from_json(json.loads(json.dumps(state.to_json()))) == state


@pytest.mark.parametrize("mode", ["bot", "local"])
def test_against_the_bot_and_on_one_phone_it_starts_at_once(mode: str) -> None:
    _, make = offer(RematchState(), seat="blue", mode=mode, finished=True, now=0.0)
    assert make


def test_the_rematch_keeps_the_page_and_swaps_the_colours_with_a_fresh_seed() -> None:
    rules = {"preset": "quick", "bases_per_side": 3}
    link = rematch_command(OldPage("quick", rules, "link", LinkClock(86400)))
    assert (link.preset, link.rules, link.mode, link.clock, link.at_once) == (
        "quick",
        rules,
        "link",
        LinkClock(86400),
        False,
    )
    assert link.new_side == {"blue": "red", "red": "blue"} and link.seed is None
    bot = rematch_command(OldPage("dawood", rules, "bot", None, "red", "beginner"))
    assert (bot.bot_side, bot.bot_strength, bot.at_once) == ("blue", "beginner", True)
    local = rematch_command(OldPage("classic", rules, "local", chosen_seed=1234))
    assert local.seed is None and local.at_once
    live = rematch_command(OldPage("quick", rules, "live", LiveClock(300, 2)))
    assert live.clock == LiveClock(300, 2) and live.bot_side is None
    assert live.rules is not rules  # the new page's rules are its own copy
