"""Issue 9, item 4 (reads): `GET /log` answers in pages that readers follow with `next` (C4), and readers
of a long log cannot starve an unrelated snapshot."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any

from tests.hostile.conftest import StartServer
from tests.support.page_client import (
    act,
    create_page,
    page_in_positioning,
    snapshot,
    store_blue_actions,
    two_places,
)
from tests.support.server_process import ServerProcess

LONG_LOG = 8000
READERS = 10  # the reproduction: ten readers of an 8,000-version log at once


# Readers in a process of their own, so that their JSON decoding does not slow the test's own
# snapshot requests: each follows `next` (one answer when the server does not page) and prints its count.
READERS_SCRIPT = """
import sys, threading, httpx
base_url, page_id, readers = sys.argv[1], sys.argv[2], int(sys.argv[3])
counts = []
def read():
    entries, start = 0, 1
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for _ in range(100000):
            body = client.get(f"/api/pages/{page_id}/log", params={"from": start}).json()
            entries += len(body["entries"])
            start = body.get("next")
            if start is None:
                break
    counts.append(entries)
threads = [threading.Thread(target=read) for _ in range(readers)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print(" ".join(map(str, counts)))
"""


def test_the_log_answers_in_pages_with_a_next_cursor(start_server: StartServer) -> None:
    server = start_server(extra_env={"DOTFIGHT_LOG_PAGE_DEFAULT": "4", "DOTFIGHT_LOG_PAGE_MAX": "6"})
    page_id, token, state = page_in_positioning(server)
    places = two_places(state)
    for version in range(1, 11):
        assert act(server, page_id, token, places[version % 2], version).status_code == 200
    url = f"/api/pages/{page_id}/log"

    def read(**params: int) -> dict[str, Any]:
        answer = server.http.get(url, params=params)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    first = read()
    assert [entry["version"] for entry in first["entries"]] == [1, 2, 3, 4] and first["next"] == 5
    assert {"rules", "mode", "seed_sha256", "seed"} <= first.keys() and first["seed"] is None
    second = read(**{"from": 5, "limit": 100})  # cut to the maximum
    assert [entry["version"] for entry in second["entries"]] == [5, 6, 7, 8, 9, 10]
    assert second["next"] == 11
    last = read(**{"from": 11, "limit": 2})
    assert [entry["version"] for entry in last["entries"]] == [11] and last["next"] is None
    assert read(**{"from": 12})["entries"] == [] and read(**{"from": 12})["next"] is None
    for bad in ({"from": 0}, {"limit": 0}, {"from": "x"}):
        answer = server.http.get(url, params=bad)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_request", answer.text


def test_readers_of_a_long_log_do_not_starve_a_snapshot(start_server: StartServer) -> None:
    server = start_server()
    page_id, _, state = page_in_positioning(server)
    other = create_page(server, preset="quick", mode="local")["id"]
    server.stop()
    places = two_places(state)
    actions = [places[version % 2] for version in range(2, LONG_LOG + 1)]
    assert store_blue_actions(server, page_id, state, actions, cache=True).version == LONG_LOG
    again = ServerProcess(server.database_url, server.log_path, extra_env=server.extra_env)
    again.start()
    try:
        assert snapshot(again, page_id)["version"] == LONG_LOG
        readers = subprocess.Popen(
            [sys.executable, "-c", READERS_SCRIPT, again.base_url, page_id, str(READERS)],
            stdout=subprocess.PIPE,
            text=True,
        )
        latencies = []
        while readers.poll() is None and len(latencies) < 5000:
            sent = time.monotonic()
            snapshot(again, other)
            latencies.append(time.monotonic() - sent)
            time.sleep(0.02)
        counts, _ = readers.communicate(timeout=120)
        assert counts.split() == [str(LONG_LOG)] * READERS
        median, worst = statistics.median(latencies) * 1000, max(latencies) * 1000
        print(f"snapshot while reading: median {median:.0f} ms, max {worst:.0f} ms")
        assert max(latencies) < 1.0, (statistics.median(latencies), max(latencies))
    finally:
        again.stop()
