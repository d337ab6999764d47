"""The garbage collector's pace in a server process (dotfight/server/collector.py): set once start-up's
objects are frozen, so that a page's engine state (alive until the page's next move) is usually freed
before it counts as long-lived, and full collections over every live page stay rare."""

from __future__ import annotations

import gc
from collections.abc import Callable

from fastapi.testclient import TestClient

from dotfight.server import collector
from dotfight.server.app import create_app
from dotfight.server.settings import Settings

# As many new objects as about two seconds of full play make; they all stay alive meanwhile, as a
# page's engine state does until the page's next move.
LIVE_OBJECTS = 400_000


def collections_while_making(count: int) -> dict[int, int]:
    """Makes `count` container objects that stay alive; returns how many collections of each
    generation ran meanwhile."""
    ran = {0: 0, 1: 0, 2: 0}

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            ran[info["generation"]] += 1

    gc.callbacks.append(note)
    try:
        kept = [[number] for number in range(count)]
    finally:
        gc.callbacks.remove(note)
    assert len(kept) == count
    return ran


def test_a_started_server_collects_its_young_objects_at_its_own_pace(
    make_settings: Callable[..., Settings],
) -> None:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's default
    try:
        with TestClient(create_app(make_settings())) as client:
            assert client.get("/api/health").status_code == 200
            assert gc.get_threshold() == collector.THRESHOLDS
            ran = collections_while_making(LIVE_OBJECTS)
    finally:
        gc.set_threshold(*saved)
    # No full pass over every live object (CPython's default pace makes three here, and 520 young
    # passes); the young generation is still collected, every 50,000 new objects.
    young = collector.THRESHOLDS[0]
    assert ran[2] == 0, ran
    assert 1 <= ran[0] <= LIVE_OBJECTS // young + 2, ran
