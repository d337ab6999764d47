"""Issue 18, item 1: one picture request cannot freeze the server. A page whose proportions once passed
every new-page check (1e-6 wide, 100 000 tall: 2.6 × 10¹² ruled lines at the book's spacing) is written
straight into the database, as a page stored before the limits would be, so the test runs the same way
whether or not creation refuses such rules; its pictures are fetched while another page's moves and
health keep answering, and the server's processes grow by less than 100 MB."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import closing
from typing import Any

import httpx

from dotfight.engine import RuleSet, new_page
from tests.hostile.conftest import StartServer
from tests.hostile.test_engine_cost import GROWTH_LIMIT, OtherPage, tree_memory
from tests.support.page_client import SEED, create_page
from tests.support.server_process import ServerProcess

# The page: a sliver of paper, its bases and dots to match (every RuleSet check passes).
EXTREME_RULES = {
    "page_width": 1e-6,
    "page_height": 100_000,
    "base_radius_min": 4e-7,
    "base_radius_max": 4e-7,
    "dot_radius": 1e-8,
}
# A page that was legal before the limits and gave a 36 MB SVG and a 23 s stall.
TALL_RULES = {
    **EXTREME_RULES,
    "page_width": 1,
    "base_radius_min": 0.4,
    "base_radius_max": 0.4,
    "dot_radius": 0.01,
}
# A page far smaller than the pen that draws it (its lines are 3.2 units wide), otherwise playable.
SMALL_RULES = {
    "page_width": 50,
    "page_height": 70,
    "base_radius_min": 5,
    "base_radius_max": 10,
    "dot_radius": 0.5,
    "outside_margin": 2,
    "base_gap": 3,
    "pull_max": 30,
}
# Small enough that a runaway drawing dies quickly, large enough for the server and its workers.
MEMORY_CAP = 2 * 1024**3
PROBE_TIMEOUT_S = 1.0
# Every loop below ends: the pictures are given this long, the probes run until they answered.
PICTURE_TIMEOUT_S = 30.0


def stored_page(server: ServerProcess, rules: dict[str, Any]) -> str:
    """A local page whose stored rules and state are `rules` (custom), written into the stopped server's
    database as an older server would have kept it."""
    created = create_page(server, preset="quick", mode="local", seed=SEED)
    ruleset = RuleSet.preset("custom", **rules)
    path = server.database_url.removeprefix("sqlite:///")
    with closing(sqlite3.connect(path)) as database, database:
        database.execute(
            "UPDATE pages SET rules = ?, preset = 'custom' WHERE id = ?",
            (json.dumps(ruleset.to_json()), created["id"]),
        )
        database.execute(
            "UPDATE page_states SET state = ?, version = 0 WHERE page_id = ?",
            (json.dumps(new_page(ruleset, SEED).to_json()), created["id"]),
        )
    page_id: str = created["id"]
    return page_id


def probe(client: httpx.Client, path: str) -> float:
    """Seconds `GET path` took to answer 200, or infinity when it did not answer in time."""
    sent = time.monotonic()
    try:
        answer = client.get(path, timeout=PROBE_TIMEOUT_S)
    except httpx.HTTPError:
        return float("inf")
    return time.monotonic() - sent if answer.status_code == 200 else float("inf")


def test_new_pages_refuse_proportions_whose_drawing_is_large(start_server: StartServer) -> None:
    server = start_server()
    for rules in (EXTREME_RULES, TALL_RULES, {"page_width": 1000, "page_height": 30_000}, SMALL_RULES):
        answer = server.http.post("/api/pages", json={"preset": "custom", "mode": "local", "rules": rules})
        assert answer.status_code == 400, (rules, answer.text)
        error = answer.json()["error"]
        assert error["code"] == "bad_request" and error["reason"] == "bad_rules", error
        assert "page_" in error["message"], error
    # Every preset, and a tall strip that is still a page, are created as before.
    for rules in ({}, {"page_width": 3000, "page_height": 60_000, "base_radius_max": 400}):
        answer = server.http.post("/api/pages", json={"preset": "custom", "mode": "local", "rules": rules})
        assert answer.status_code == 201, (rules, answer.text)


def test_a_stored_extreme_pages_pictures_leave_the_server_answering(start_server: StartServer) -> None:
    first = start_server(memory_limit_bytes=MEMORY_CAP)
    extreme = stored_page(first, EXTREME_RULES)
    tall = stored_page(first, TALL_RULES)
    first.stop()
    server = first.another()
    try:
        other = OtherPage(server)
        # The picture machinery is warmed on an ordinary page: the growth measured is the extreme page's.
        assert (
            server.http.get(f"/api/pages/{other.page_id}/picture.svg", timeout=PICTURE_TIMEOUT_S).status_code
            == 200
        )
        before = tree_memory(server)
        answers: dict[str, httpx.Response | Exception] = {}

        def fetch() -> None:
            with httpx.Client(base_url=server.base_url, timeout=PICTURE_TIMEOUT_S) as client:
                for page_id in (extreme, tall):
                    for kind in ("svg", "png"):
                        path = f"/api/pages/{page_id}/picture.{kind}"
                        try:
                            answers[path] = client.get(path)
                        except httpx.HTTPError as error:
                            answers[path] = error
                # The link preview names the picture: its page answers too.
                answers["preview"] = client.get(f"/p/{extreme}")

        fetcher = threading.Thread(target=fetch, daemon=True)
        fetcher.start()
        other.thread.start()
        health: list[float] = []
        peak = before
        with httpx.Client(base_url=server.base_url) as client:
            deadline = time.monotonic() + 4 * PICTURE_TIMEOUT_S
            while (fetcher.is_alive() or len(health) < 10) and time.monotonic() < deadline:
                health.append(probe(client, "/api/health"))
                peak = max(peak, tree_memory(server))
                if health[-1] == float("inf"):
                    break  # the server stopped answering: no need to wait for the rest
                time.sleep(0.05)
        print(
            f"health: max {max(health) * 1000:.0f} ms over {len(health)}; growth {(peak - before) >> 20} MB"
        )
        assert max(health) < PROBE_TIMEOUT_S, health
        other.stop.set()
        other.thread.join(5 * PROBE_TIMEOUT_S)
        assert not other.thread.is_alive(), "the other page's move never came back"
        assert other.answers and max(other.answers) < PROBE_TIMEOUT_S, other.answers
        assert peak - before < GROWTH_LIMIT, (before, peak)
        fetcher.join(PICTURE_TIMEOUT_S)
        assert not fetcher.is_alive()
        for path, answer in answers.items():
            assert isinstance(answer, httpx.Response), (path, answer)
            # A bounded picture, or a clear refusal: never a stall, never a 500.
            if answer.status_code == 200:
                assert len(answer.content) < 1_000_000, (path, len(answer.content))
            else:
                assert answer.status_code == 503 and answer.json()["error"]["code"] == "unavailable", (
                    answer.text
                )
        with httpx.Client(base_url=server.base_url) as fresh:  # a new connection is still accepted
            assert probe(fresh, "/api/health") < PROBE_TIMEOUT_S
    finally:
        server.stop()
