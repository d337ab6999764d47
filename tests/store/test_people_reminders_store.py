"""The store's side of issue 19's last gaps, on every backend (in memory, SQLite, PostgreSQL): a link
page's reminder kept with the page (written with its deadline, kept by an action that leaves the
deadline as it was, claimed by one caller only, moved by a downtime credit unless sent), the earliest
standing offers' ends, and a rematch's seats kept hashed and sealed with the offer and the accept."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

import pytest

from dotfight.store.records import ClockUpdate, OfferEnd, RematchRefused, Reminder, SealedSeat
from dotfight.store.sql_pages import SqlPageStore
from tests.store.test_people_store import (
    T0,
    Store,
    _at_once,
    move,
    new_page,
    rematch_page,
    store,
    two_processes,
)

__all__ = ["store", "two_processes"]  # the fixtures, used by name

HOUR = timedelta(hours=1)
LINK = {"per_move_s": 3600}


def link_clock(running: str | None, since: int, *, reminded: bool = True) -> ClockUpdate:
    """A link page's clock whose move began `since` hours after T0: deadline an hour on, reminder at 0.8."""
    if running is None:
        return ClockUpdate({"running": None}, None, None)
    start = T0 + since * HOUR
    reminder = start + 0.8 * HOUR if reminded else None
    return ClockUpdate({"running": running, "since": since}, start + HOUR, reminder)


def test_a_reminder_is_written_with_its_deadline_and_kept_by_the_same_move(store: Store) -> None:
    new_page(store, "p1", link_clock("blue", 0), LINK)
    assert store.next_reminders(5) == [Reminder("p1", T0 + 0.8 * HOUR, "blue", T0 + HOUR)]
    # Claimed once: the first caller wins, the second finds it gone.
    assert store.claim_reminder("p1", T0 + 0.8 * HOUR).result(10) is True
    assert store.claim_reminder("p1", T0 + 0.8 * HOUR).result(10) is False
    assert store.claim_reminder("no-such-page", T0).result(10) is False
    assert store.next_reminders(5) == []
    # An action of the same move writes the same deadline (and the clock's reminder again): it stays sent.
    move(store, "p1", 1, link_clock("blue", 0)).result(10)
    assert store.next_reminders(5) == []
    # The turn passes: the new deadline brings red's reminder; a stale claim of blue's wins nothing.
    move(store, "p1", 2, link_clock("red", 1)).result(10)
    assert store.claim_reminder("p1", T0 + 0.8 * HOUR).result(10) is False
    assert store.next_reminders(5) == [Reminder("p1", T0 + 1.8 * HOUR, "red", T0 + 2 * HOUR)]
    # What a move wrote is claimed by its moment as exactly as what the creation wrote.
    assert store.claim_reminder("p1", T0 + 1.8 * HOUR).result(10) is True
    # The page ends: no deadline, no reminder.
    move(store, "p1", 3, link_clock(None, 0), status="over").result(10)
    assert store.next_reminders(5) == []


def test_the_earliest_reminders_of_pages_in_play_come_first(store: Store) -> None:
    new_page(store, "late", link_clock("blue", 5), LINK)
    new_page(store, "early", link_clock("blue", 1), LINK)
    new_page(store, "none", link_clock("blue", 0, reminded=False), LINK)
    new_page(store, "live", ClockUpdate({"running": "blue"}, T0, None))
    assert [due.page_id for due in store.next_reminders(5)] == ["early", "late"]
    assert [due.page_id for due in store.next_reminders(1)] == ["early"]


def test_a_downtime_credit_moves_a_waiting_reminder_and_leaves_a_sent_one_sent(store: Store) -> None:
    new_page(store, "waiting", link_clock("blue", 0), LINK)
    new_page(store, "sent", link_clock("blue", 0), LINK)
    store.claim_reminder("sent", T0 + 0.8 * HOUR).result(10)
    store.beat("before", T0, T0).result(10)

    def credit(state: dict[str, object], down_from: object, up_at: object) -> ClockUpdate:
        return link_clock("blue", 2)  # the clock model moves `since` on by the outage

    store.beat_crediting("after", T0 + 2 * HOUR, T0 + 2 * HOUR, timedelta(seconds=3), credit).result(10)
    assert store.next_reminders(5) == [Reminder("waiting", T0 + 2.8 * HOUR, "blue", T0 + 3 * HOUR)]
    assert store.load("sent").deadline == T0 + 3 * HOUR


def test_two_processes_claiming_one_reminder_at_once_one_wins(
    two_processes: tuple[SqlPageStore, SqlPageStore],
) -> None:
    first, second = two_processes
    for round_number in range(8):
        page_id = f"r{round_number}"
        new_page(first, page_id, link_clock("blue", 0), LINK)
        at = T0 + 0.8 * HOUR
        outcomes = _at_once(
            partial(first.claim_reminder, page_id, at), partial(second.claim_reminder, page_id, at)
        )
        assert sorted(outcomes) == [False, True], outcomes


def test_the_earliest_standing_offers_ends_come_first(store: Store) -> None:
    for page_id in ("a", "b", "c", "made"):
        new_page(store, page_id)
    store.offer_rematch("a", "red", T0, T0 + 3 * HOUR).result(10)
    store.offer_rematch("b", "blue", T0, T0 + HOUR).result(10)
    store.offer_rematch("c", "blue", T0, T0 + 2 * HOUR).result(10)
    store.offer_rematch("made", "red", T0, T0 + HOUR).result(10)
    store.accept_rematch("made", "blue", T0, *rematch_page("new")).result(10)
    assert store.next_offer_ends(T0, 5) == [
        OfferEnd("b", "blue", T0 + HOUR),
        OfferEnd("c", "blue", T0 + 2 * HOUR),
        OfferEnd("a", "red", T0 + 3 * HOUR),
    ]
    assert [end.page_id for end in store.next_offer_ends(T0 + HOUR, 5)] == ["c", "a"]  # b ran out
    assert [end.page_id for end in store.next_offer_ends(T0, 1)] == ["b"]


def test_an_offer_keeps_its_seat_and_the_accept_its_seal(store: Store) -> None:
    new_page(store, "old")
    seat = SealedSeat("a" * 64, "sealed-for-red")
    offer = store.offer_rematch("old", "red", T0, T0 + HOUR, seat).result(10)
    assert offer.offered_seat == seat
    # Offered again while it stands: the first seat stays (it is the one the offerer will be given).
    again = store.offer_rematch("old", "red", T0, T0 + HOUR, SealedSeat("b" * 64, "other")).result(10)
    assert again.offered_seat == seat
    # An accept made with another seat than the offer's (the offer was made again meanwhile) is refused.
    with pytest.raises(RematchRefused) as refusal:
        store.accept_rematch("old", "blue", T0, *rematch_page("new"), offered_seat="b" * 64).result(10)
    assert refusal.value.reason == "offered_again"
    accepted = store.accept_rematch(
        "old", "blue", T0, *rematch_page("new"), offered_seat="a" * 64, accepted_seal="sealed-for-blue"
    ).result(10)
    assert (accepted.offered_seat, accepted.accepted_seal) == (seat, "sealed-for-blue")
    assert store.rematch("old") == accepted
