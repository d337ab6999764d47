"""Creating a page with a clock (PROTOCOL.md, "Time, absence, rematch and phrases"): a live page takes
`{initial_s, increment_s}`, a link page `{per_move_s}`, in whole seconds within the ranges; anything else
is bad_request and creates nothing. The clock is kept with the page and shown in the creation answer's
snapshot and the page's summary."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dotfight.server.people.clock import SETUP_MOVE_S

LIVE_CLOCK = {"initial_s": 300, "increment_s": 3}
LINK_CLOCK = {"per_move_s": 86_400}


def _create(client: TestClient, **body: Any) -> Any:
    return client.post("/api/pages", json={"preset": "quick", **body})


def _summary(client: TestClient, page_id: str) -> dict[str, Any]:
    [summary] = client.get(f"/api/pages?ids={page_id}").json()
    assert isinstance(summary, dict)
    return summary


@pytest.mark.parametrize(
    ("mode", "clock", "whole"),
    [
        ("live", LIVE_CLOCK, 300),
        ("live", {"initial_s": 15, "increment_s": 0}, 15),
        ("live", {"initial_s": 10_800, "increment_s": 180}, 10_800),
        ("link", LINK_CLOCK, 86_400),
        ("link", {"per_move_s": 3_600}, 3_600),
        ("link", {"per_move_s": 1_209_600}, 1_209_600),
    ],
)
def test_a_clock_in_range_is_kept_and_shown(
    client: TestClient, mode: str, clock: dict[str, int], whole: int
) -> None:
    before = datetime.now(UTC)
    response = _create(client, mode=mode, clock=clock)
    assert response.status_code == 201, response.text
    created = response.json()
    shown = created["snapshot"]["clock"]
    assert {key: shown[key] for key in clock} == clock
    # Blue, to act first, runs from the creation: its setup move's time on a live page (both clocks stay
    # whole until the first turn of play), its time for the move on a link page.
    now = datetime.fromisoformat(shown["now"])
    budget = SETUP_MOVE_S if mode == "live" else whole
    assert shown["running"] == "blue" and shown["red_s"] == whole
    assert whole - 5 <= shown["blue_s"] <= whole
    deadline = datetime.fromisoformat(shown["deadline"])
    assert budget - 5 <= (deadline - now).total_seconds() <= budget
    if mode == "link":  # counted down to the answer's `now`
        assert abs(shown["blue_s"] - (deadline - now).total_seconds()) <= 0.002
    assert shown["now"].endswith("Z") and shown["deadline"].endswith("Z")
    assert before.replace(microsecond=0) <= now <= datetime.now(UTC)
    summary = _summary(client, created["id"])
    assert (summary["clock"], summary["running"], summary["reason"]) == (clock, "blue", None)
    assert abs((datetime.fromisoformat(summary["deadline"]) - deadline).total_seconds()) < 0.001


@pytest.mark.parametrize("mode", ["live", "link", "local", "bot"])
@pytest.mark.parametrize("clock", [None, "absent"])
def test_no_clock_or_null_means_no_time_limit(client: TestClient, mode: str, clock: object) -> None:
    body: dict[str, Any] = {"mode": mode} if clock == "absent" else {"mode": mode, "clock": None}
    response = _create(client, **body)
    assert response.status_code == 201, response.text
    assert response.json()["snapshot"]["clock"] is None
    assert _summary(client, response.json()["id"])["clock"] is None


@pytest.mark.parametrize(
    ("mode", "clock"),
    [
        ("local", LIVE_CLOCK),
        ("bot", LIVE_CLOCK),
        ("local", LINK_CLOCK),
        ("bot", LINK_CLOCK),
        ("live", LINK_CLOCK),
        ("link", LIVE_CLOCK),
        ("live", {"initial_s": 14, "increment_s": 0}),
        ("live", {"initial_s": 10_801, "increment_s": 0}),
        ("live", {"initial_s": 60, "increment_s": -1}),
        ("live", {"initial_s": 60, "increment_s": 181}),
        ("live", {"initial_s": 60}),
        ("live", {"initial_s": 60, "increment_s": 0, "per_move_s": 3_600}),
        ("live", {"initial_s": 60.5, "increment_s": 0}),
        ("live", {"initial_s": 60.0, "increment_s": 0}),
        ("live", {"initial_s": "60", "increment_s": 0}),
        ("live", {"initial_s": True, "increment_s": 0}),
        ("live", {"initial_s": 60, "increment_s": False}),
        ("live", {"initial_s": 2**70, "increment_s": 0}),
        ("link", {"per_move_s": 3_599}),
        ("link", {"per_move_s": 1_209_601}),
        ("link", {"per_move_s": None}),
        ("link", {}),
        ("link", 86_400),
        ("link", [86_400]),
        ("link", "1d"),
    ],
)
def test_a_wrong_clock_is_bad_request_and_creates_nothing(
    client: TestClient, mode: str, clock: object
) -> None:
    response = _create(client, mode=mode, clock=clock)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "bad_request"
    assert "id" not in response.json()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_clock_is_bad_request(client: TestClient, number: str) -> None:
    body = f'{{"preset": "quick", "mode": "live", "clock": {{"initial_s": {number}, "increment_s": 0}}}}'
    response = client.post("/api/pages", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "bad_request"


def test_a_page_with_a_clock_plays_and_its_snapshot_reads_as_before(client: TestClient) -> None:
    created = _create(client, mode="live", clock=LIVE_CLOCK).json()
    response = client.post(
        f"/api/pages/{created['id']}/actions",
        json={"action": {"type": "quick_setup"}, "version": 0},
        headers={"Authorization": f"Bearer {created['seats']['blue']}"},
    )
    assert response.status_code == 200, response.text
    assert client.get(f"/api/pages/{created['id']}").json()["version"] == 1
