"""Issue 18, item 1 (load): eight anonymous clients fetching pictures leave an unrelated snapshot fast.

The clients share the test's one address, so the per-address picture limit is lifted; the picture cache
is kept small, so that they make the server draw all along rather than only at first (more pages than
today's 32 cached pictures, and fewer bytes than their pictures take)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from tests.hostile.conftest import StartServer
from tests.support.page_client import act, local_page_in_play, snapshot
from tests.support.players import nearest_snipe_action
from tests.support.server_process import ServerProcess

CLIENTS = 8
PAGES = 40
LINES_PER_PAGE = 6
LOAD_S = 12.0
P99_LIMIT_S = 0.050
UNLIMITED_PICTURES = {
    "DOTFIGHT_PICTURES_PER_ADDRESS_PER_SECOND": "100000",
    "DOTFIGHT_PICTURE_BURST": "100000",
    "DOTFIGHT_PICTURE_CACHE_BYTES": str(2 * 1024**2),
    # The test sets up its pages faster than a person could.
    "DOTFIGHT_HTTP_REQUESTS_PER_SECOND": "100000",
    "DOTFIGHT_HTTP_REQUEST_BURST": "100000",
}

# The clients run in a process of their own (their decoding must not slow the test's own requests);
# each fetches the pictures of every page in turn, SVG and PNG, until the time is up, and the process
# prints how many answers of each status came back.
CLIENTS_SCRIPT = """
import collections, sys, threading, time, httpx
base_url, seconds, clients, ids = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
statuses = collections.Counter()
lock = threading.Lock()
def fetch(offset):
    end = time.monotonic() + seconds
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for n in range(100000):
            if time.monotonic() > end:
                break
            page_id = ids[(offset + n) % len(ids)]
            kind = "png" if (offset + n // len(ids)) % 2 else "svg"
            status = client.get(f"/api/pages/{page_id}/picture.{kind}").status_code
            with lock:
                statuses[status] += 1
threads = [threading.Thread(target=fetch, args=(k * 5,)) for k in range(clients)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print(" ".join(f"{status}:{count}" for status, count in sorted(statuses.items())))
"""


def played_page(server: ServerProcess) -> str:
    """A local quick page in play with a few lines of ink."""
    page_id, token, page = local_page_in_play(server)
    for _ in range(LINES_PER_PAGE):
        if page["phase"] != "play":
            break
        assert act(server, page_id, token, nearest_snipe_action(page), page["version"]).status_code == 200
        page = snapshot(server, page_id)
    return page_id


def snapshot_latencies(
    server: ServerProcess, page_id: str, seconds: float, until: subprocess.Popen[str] | None
) -> list[float]:
    """Times snapshots of `page_id` every 20 ms for `seconds` (or until `until` ends)."""
    latencies = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and (until is None or until.poll() is None):
        sent = time.monotonic()
        snapshot(server, page_id)
        latencies.append(time.monotonic() - sent)
        time.sleep(0.02)
    return latencies


def p99(latencies: list[float]) -> float:
    return statistics.quantiles(latencies, n=100)[98]


def test_eight_clients_fetching_pictures_leave_a_snapshot_under_50_ms(start_server: StartServer) -> None:
    server = start_server(extra_env=UNLIMITED_PICTURES, extra_args=["--no-access-log"])
    pages = [played_page(server) for _ in range(PAGES)]
    other, _, _ = local_page_in_play(server)
    # The picture machinery is started (a worker process, on a server that draws off its loop).
    assert server.http.get(f"/api/pages/{pages[0]}/picture.png", timeout=60).status_code == 200
    idle = snapshot_latencies(server, other, 3.0, None)
    # The clients stand for other machines: on this shared one they yield the CPU to the server, as
    # remote clients would cost it nothing.
    clients = subprocess.Popen(
        [sys.executable, "-c", CLIENTS_SCRIPT, server.base_url, str(LOAD_S), str(CLIENTS), *pages],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.nice(19),
    )
    try:
        time.sleep(0.5)  # the clients are fetching
        loaded = snapshot_latencies(server, other, LOAD_S, clients)
        statuses, _ = clients.communicate(timeout=LOAD_S + 120)
    finally:
        if clients.poll() is None:
            clients.kill()
    counts = dict(item.split(":") for item in statuses.split())
    print(
        f"snapshot idle: p50 {statistics.median(idle) * 1000:.1f} ms, p99 {p99(idle) * 1000:.1f} ms; "
        f"with {CLIENTS} picture clients: p50 {statistics.median(loaded) * 1000:.1f} ms, "
        f"p99 {p99(loaded) * 1000:.1f} ms, max {max(loaded) * 1000:.0f} ms; pictures {counts}"
    )
    assert int(counts.get("200", 0)) >= 2 * CLIENTS, counts  # the clients really fetched pictures
    assert set(counts) <= {"200", "503"}, counts
    assert p99(loaded) < P99_LIMIT_S, (p99(loaded), statistics.median(loaded))
