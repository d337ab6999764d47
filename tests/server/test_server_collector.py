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


def test_a_started_server_collects_its_young_objects_at_its_own_pace(
    make_settings: Callable[..., Settings],
) -> None:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's default
    try:
        with TestClient(create_app(make_settings())) as client:
            assert client.get("/api/health").status_code == 200
            assert gc.get_threshold() == collector.THRESHOLDS
    finally:
        gc.set_threshold(*saved)
    young, middle, _ = collector.THRESHOLDS
    # An object counts as long-lived only after about a million new objects: seconds of full play.
    assert young * middle >= 1_000_000
