"""One timer for the earliest deadline (dotfight/server/people/alarm.py), driven by a manual clock: one
task however many pages wait, O(log n) heap work per change (counted, not timed)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotfight.server.people.alarm import Alarm, ManualClock, SystemClock


class CountedTime(float):
    """A deadline that counts the comparisons the heap makes with it."""

    comparisons = 0

    def __lt__(self, other: Any) -> bool:
        CountedTime.comparisons += 1
        return float(self) < float(other)

    def __eq__(self, other: object) -> bool:
        CountedTime.comparisons += 1
        return isinstance(other, float) and float(self) == float(other)

    __hash__ = float.__hash__


def other_tasks() -> set[asyncio.Task[Any]]:
    """Returns the loop's tasks other than the test's own."""
    return {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}


async def test_pages_are_called_back_in_deadline_order_once() -> None:
    clock, due = ManualClock(1000.0), list[str]()
    alarm = Alarm(due.append, clock)
    alarm.start()
    alarm.set("late", 1050.0)
    alarm.set("soon", 1010.0)
    alarm.set("moved", 1005.0)
    alarm.set("moved", 1030.0)  # moved later: not called at 1005
    alarm.set("cleared", 1001.0)
    alarm.clear("cleared")
    await clock.advance(5.0)
    assert due == []
    await clock.advance(5.0)
    assert due == ["soon"]
    await clock.advance(40.0)
    assert due == ["soon", "moved", "late"]
    await clock.advance(1000.0)
    assert due == ["soon", "moved", "late"] and len(alarm) == 0
    alarm.stop()


async def test_a_new_earliest_deadline_wakes_the_sleeping_task() -> None:
    clock, due = ManualClock(0.0), list[str]()
    alarm = Alarm(due.append, clock)
    alarm.start()
    alarm.set("far", 3600.0)
    await clock.advance(1.0)
    alarm.set("near", 2.0)  # set while the task sleeps towards 3600
    await clock.advance(1.0)
    assert due == ["near"]
    alarm.stop()


async def test_a_failing_callback_does_not_stop_the_others() -> None:
    clock, due = ManualClock(0.0), list[str]()

    def on_due(page_id: str) -> None:
        if page_id == "bad":
            raise RuntimeError("boom")
        due.append(page_id)

    alarm = Alarm(on_due, clock)
    alarm.start()
    alarm.set("bad", 1.0)
    alarm.set("good", 2.0)
    await clock.advance(3.0)
    assert due == ["good"]
    alarm.stop()


async def test_a_thousand_waiting_pages_make_one_sleeping_task_and_log_n_work_per_change() -> None:
    clock, due = ManualClock(0.0), list[str]()
    alarm = Alarm(due.append, clock)
    before = other_tasks()
    alarm.start()
    pages = 1000
    CountedTime.comparisons = 0
    for i in range(pages):
        alarm.set(f"p{i}", CountedTime(3600.0 + (i * 7919) % pages))
    await clock.advance(60.0)  # the task wakes (max_sleep_s) and sleeps again: nothing is due
    assert len(other_tasks() - before) == 1
    assert due == [] and len(alarm) == pages
    bound = 4 * math.log2(pages) + 8
    assert 0 < CountedTime.comparisons / pages <= bound
    # moving and clearing deadlines stays O(log n) per change, stale entries included
    CountedTime.comparisons = 0
    for i in range(pages):
        alarm.set(f"p{i}", CountedTime(7200.0 + (i * 104729) % pages))
        alarm.clear(f"p{(i * 31) % pages}")
    assert 0 < CountedTime.comparisons / (2 * pages) <= bound
    assert len(other_tasks() - before) == 1
    alarm.stop()


async def test_the_system_clock_waits_on_a_loop_timer_and_wakes_on_the_event() -> None:
    clock = SystemClock()
    wakeup = asyncio.Event()
    loop = asyncio.get_running_loop()
    started = loop.time()
    await clock.wait(wakeup, 0.01)
    assert loop.time() - started >= 0.009
    loop.call_soon(wakeup.set)
    started = loop.time()
    await clock.wait(wakeup, 30.0)
    assert loop.time() - started < 1.0


@pytest.mark.parametrize("start", [0.0, 1.7e9])
async def test_an_alarm_without_pages_sleeps_until_its_longest_nap(start: float) -> None:
    clock, due = ManualClock(start), list[str]()
    alarm = Alarm(due.append, clock, max_sleep_s=5.0)
    alarm.start()
    await clock.advance(20.0)
    alarm.set("p", start + 21.0)
    await clock.advance(1.0)
    assert due == ["p"]
    alarm.stop()


async def test_an_async_callback_runs_as_its_own_task_and_does_not_hold_up_the_next_page() -> None:
    clock, due = ManualClock(0.0), list[str]()
    release = asyncio.Event()

    async def on_due(page_id: str) -> None:
        due.append(f"{page_id} began")
        if page_id == "slow":
            await release.wait()
        due.append(f"{page_id} ended")

    alarm = Alarm(on_due, clock)
    alarm.start()
    alarm.set("slow", 1.0)
    alarm.set("fast", 1.5)
    await clock.advance(2.0)
    assert due == ["slow began", "fast began", "fast ended"]
    release.set()
    await asyncio.sleep(0)
    assert due[-1] == "slow ended"
    alarm.stop()


def test_a_time_that_is_not_a_number_is_refused() -> None:
    alarm = Alarm(print, ManualClock(0.0))
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="finite"):
            alarm.set("p", bad)
    assert len(alarm) == 0


CHANGES = st.lists(
    st.tuples(st.sampled_from(["p0", "p1", "p2", "p3", "p4"]), st.one_of(st.none(), st.integers(1, 50))),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(CHANGES, st.integers(1, 60))
def test_the_alarm_calls_back_exactly_the_pages_a_plain_dict_says_are_due(
    changes: list[tuple[str, int | None]], advance: int
) -> None:
    """Model check: after any sets (a time) and clears (None), advancing the clock calls back, in time
    order, exactly the pages whose last set time has come."""

    async def run() -> list[str]:
        clock, due = ManualClock(0.0), list[str]()
        alarm = Alarm(due.append, clock)
        alarm.start()
        for page_id, when in changes:
            if when is None:
                alarm.clear(page_id)
            else:
                alarm.set(page_id, float(when))
        await clock.advance(float(advance))
        alarm.stop()
        return due

    model: dict[str, int] = {}
    for page_id, when in changes:
        if when is None:
            model.pop(page_id, None)
        else:
            model[page_id] = when
    expected = [page for page, when in sorted(model.items(), key=lambda item: item[1]) if when <= advance]
    due = asyncio.run(run())
    assert sorted(due) == sorted(expected)
    assert [model[page] for page in due] == sorted(model[page] for page in due)
