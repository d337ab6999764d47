"""Server benchmark: N live pages over loopback WebSockets against a real server process.

Starts `dotfight serve` on a temporary SQLite file, creates `--pages` live pages (quick preset, set up
over HTTP), connects both seats of each page (2 × pages sockets) and lets every page play flicks
alternately: each side answers the other's move after a think time (`--think` seconds on average, 0 for
as fast as possible). The flicks are soft snipes aimed at the flicker's own edge of the page, so nobody
is crossed out and every page can go on for as long as the run lasts.

Prints throughput (actions/s) and the latency from sending an action to the opponent's socket receiving
its events (p50, p99, max).

    python3 benchmarks/server.py --pages 200 --actions 30 --think 1.0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

# A script, not a package: the shared harness lives in tests/support under the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess

# A soft pull: short, sure ink that stays in the flicker's own half.
SOFT_PULL = 40.0
# A message not heard within this long fails the run (rather than hanging it).
RECEIVE_TIMEOUT = 30.0


def cpu_seconds(pid: int) -> float:
    """Returns the CPU time (user + system) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_server(workdir: Path) -> ServerProcess:
    """The server under test, on a fresh SQLite file in `workdir`."""
    return ServerProcess.on_sqlite(
        workdir,
        extra_args=["--no-access-log"],
        # The clients here play far faster than people (--think 0): lift the per-client flood limits.
        extra_env={
            "DOTFIGHT_HTTP_REQUEST_BURST": "1000000",
            "DOTFIGHT_WS_MESSAGES_PER_SECOND": "100000",
            "DOTFIGHT_WS_MESSAGE_BURST": "100000",
            **RELAXED_ACTION_BUDGET,
        },
    )


class Page:
    """One live page and both of its sockets."""

    def __init__(self, page_id: str, seats: dict[str, str], snapshot: dict[str, Any]) -> None:
        self.id = page_id
        self.seats = seats
        self.version = snapshot["version"]
        self.side = snapshot["side_to_act"]
        self.alive = {
            side: [s["id"] for s in snapshot["soldiers"] if s["side"] == side and s["alive"]]
            for side in seats
        }
        self.sockets: dict[str, ClientConnection] = {}


async def receive_events(connection: ClientConnection, version: int) -> dict[str, Any]:
    """Waits for the events message of `version` (presence and acks are skipped)."""
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(connection.recv(), RECEIVE_TIMEOUT))
        if message["type"] == "events" and message["version"] == version:
            return message
        if message["type"] == "error":
            raise RuntimeError(f"refused: {message}")


async def receive_ack(connection: ClientConnection, move_id: str) -> None:
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(connection.recv(), RECEIVE_TIMEOUT))
        if message["type"] == "ack" and message["move_id"] == move_id:
            return
        if message["type"] == "error":
            raise RuntimeError(f"refused: {message}")


async def play(
    page: Page, ws_base: str, args: argparse.Namespace, latencies: list[float], stop_at: float
) -> int:
    """Plays one page until it made `args.actions` actions or the time is up; returns actions made."""
    for side, token in page.seats.items():
        connection = await connect(f"{ws_base}/api/pages/{page.id}/ws", max_queue=None)
        await connection.send(json.dumps({"type": "hello", "token": token, "version": page.version}))
        page.sockets[side] = connection
    made = 0
    rng = random.Random(page.id)
    try:
        while made < args.actions and time.perf_counter() < stop_at:
            if args.think > 0:
                await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
            side, other = page.side, ("red" if page.side == "blue" else "blue")
            soldier = page.alive[side][made % len(page.alive[side])]
            direction = 1.0 if side == "blue" else -1.0  # blue owns the bottom half: aim down
            move_id = f"{page.id}-{page.version}"
            action = {
                "type": "flick",
                "soldier": soldier,
                "kind": "snipe",
                "vector": [0.0, direction * SOFT_PULL],
            }
            sent = time.perf_counter()
            await page.sockets[side].send(
                json.dumps({"type": "action", "action": action, "version": page.version, "move_id": move_id})
            )
            heard = await receive_events(page.sockets[other], page.version + 1)
            latencies.append(time.perf_counter() - sent)
            await receive_ack(page.sockets[side], move_id)
            page.version = heard["version"]
            for event in heard["events"]:
                if event["type"] == "turn":
                    page.side = event["side"]
            made += 1
    finally:
        for connection in page.sockets.values():
            await connection.close()
    return made


async def create_pages(base: str, count: int) -> list[Page]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:

        async def one() -> Page:
            created = (await client.post("/api/pages", json={"preset": "quick", "mode": "live"})).json()
            page_id, seats = created["id"], created["seats"]
            version = 0
            for side, action in (
                ("blue", {"type": "quick_setup"}),
                ("blue", {"type": "ready"}),
                ("red", {"type": "ready"}),
            ):
                response = await client.post(
                    f"/api/pages/{page_id}/actions",
                    json={"action": action, "version": version},
                    headers={"Authorization": f"Bearer {seats[side]}"},
                )
                response.raise_for_status()
                version = response.json()["version"]
            snapshot = (await client.get(f"/api/pages/{page_id}")).json()
            return Page(page_id, seats, snapshot)

        pages: list[Page] = []
        for start in range(0, count, 20):
            pages += await asyncio.gather(*(one() for _ in range(min(20, count - start))))
        return pages


async def run(args: argparse.Namespace, base: str, server_pid: int) -> None:
    pages = await create_pages(base, args.pages)
    ws_base = base.replace("http://", "ws://")
    latencies: list[float] = []
    server_cpu = cpu_seconds(server_pid)
    own_cpu = time.process_time()
    started = time.perf_counter()
    made = await asyncio.gather(
        *(play(page, ws_base, args, latencies, started + args.seconds) for page in pages)
    )
    elapsed = time.perf_counter() - started
    server_cpu = cpu_seconds(server_pid) - server_cpu
    own_cpu = time.process_time() - own_cpu
    total = sum(made)
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    sockets = 2 * args.pages
    print(f"pages {args.pages} ({sockets} sockets), think {args.think} s: {total} actions, {elapsed:.1f} s")
    print(f"throughput {total / elapsed:.0f} actions/s")
    print(
        f"CPU: server {server_cpu / total * 1000:.2f} ms/action ({server_cpu / elapsed:.0%} of a core),"
        f" clients {own_cpu / elapsed:.0%} of a core; load average {os.getloadavg()[0]:.1f}"
    )
    worst = ordered[-1] * 1000
    print(f"latency (send -> opponent hears): p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {worst:.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=200, help="live pages played at once (default 200)")
    parser.add_argument("--actions", type=int, default=30, help="actions per page (default 30)")
    parser.add_argument("--seconds", type=float, default=60.0, help="stop after this long (default 60)")
    parser.add_argument("--think", type=float, default=1.0, help="mean think time per move, s (default 1.0)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        server = bench_server(Path(workdir))
        try:
            server.start()
            assert server.process is not None
            asyncio.run(run(args, server.base_url, server.process.pid))
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
