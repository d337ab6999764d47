"""An action's hand-offs between threads (dotfight/server/pages/handoff.py): the engine threads take
calls from one queue without a Future per call, and the answers given to the event loop from other
threads while it has not yet run wake it once for all of them (a group commit's actions are heard with
one wake-up), a cancelled caller is skipped and nothing is lost."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from dotfight.server.pages.handoff import LoopReplies, WorkThreads


class CountingLoop:
    """The running loop, counting the wake-ups asked of it from other threads."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.wakeups = 0

    def call_soon_threadsafe(self, callback: Any, *args: Any) -> Any:
        self.wakeups += 1
        return self.loop.call_soon_threadsafe(callback, *args)


def answer_from_a_thread(replies: LoopReplies, answers: list[tuple[asyncio.Future[Any], Any]]) -> None:
    """Gives the answers from another thread while the loop waits (blocked: it cannot run meanwhile)."""

    def give() -> None:
        for future, outcome in answers:
            replies.settle(future, outcome)

    thread = threading.Thread(target=give)
    thread.start()
    thread.join()


def test_answers_given_before_the_loop_runs_wake_it_once() -> None:
    async def play() -> tuple[list[Any], int]:
        loop = asyncio.get_running_loop()
        counting = CountingLoop(loop)
        replies = LoopReplies(counting)  # type: ignore[arg-type]
        futures = [loop.create_future() for _ in range(20)]
        answer_from_a_thread(replies, [(future, number) for number, future in enumerate(futures)])
        first = await asyncio.gather(*futures)
        # Once the loop took them, the next answer wakes it again.
        later = loop.create_future()
        answer_from_a_thread(replies, [(later, "later")])
        return [*first, await later], counting.wakeups

    answers, wakeups = asyncio.run(play())
    assert answers == [*range(20), "later"]
    assert wakeups == 2


def test_an_error_is_raised_to_its_caller_and_a_cancelled_caller_is_skipped() -> None:
    async def play() -> tuple[str, bool, int]:
        loop = asyncio.get_running_loop()
        replies = LoopReplies(loop)
        failing, cancelled, fine = (loop.create_future() for _ in range(3))
        cancelled.cancel()
        answer_from_a_thread(replies, [(failing, KeyError("gone")), (cancelled, 1), (fine, 2)])
        try:
            await failing
        except KeyError as error:
            message = str(error)
        return message, cancelled.cancelled(), await fine

    assert asyncio.run(play()) == ("'gone'", True, 2)


def test_work_threads_run_every_call_and_outlive_a_failing_one() -> None:
    threads = WorkThreads(3, "test-work")
    done: list[int] = []
    lock = threading.Lock()

    def work(number: int) -> None:
        if number == 5:
            raise RuntimeError("a failing call")
        with lock:
            done.append(number)

    for number in range(50):
        threads.submit(work, number)
    threads.shutdown()  # finishes what was queued
    assert sorted(done) == [number for number in range(50) if number != 5]
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("test-work")]
