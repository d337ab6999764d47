"""Server benchmark: N live pages over loopback WebSockets against a real server process.

Starts `dotfight serve` on a temporary SQLite file, creates `--pages` live pages (quick preset, set up
over HTTP), connects both seats of each page (2 × pages sockets) and lets every page play flicks
alternately: each side answers the other's move after a think time (`--think` seconds on average, 0 for
as fast as possible). The flicks are soft snipes aimed at the flicker's own edge of the page, so nobody
is crossed out and every page can go on for as long as the run lasts.

Prints throughput (actions/s), the latency from sending an action to the opponent's socket receiving
its events (p50, p99, max), the server's CPU per action and its memory per live page (resident growth
with both sockets connected, over the server's size before the pages were made).

With `--floor`, the same load also runs against the floor of Dotfight's own stack
(`benchmarks/floor_app.py`: FastAPI + uvicorn WebSocket, one durable SQLite insert with group commit,
the same frames forwarded), interleaved with Dotfight over `--rounds` rounds (the order alternates each
round), and prints both contenders' medians and Dotfight's ratio to the floor: figures measured in one
run on a shared, noisy machine compare fairly only as ratios.

    python3 benchmarks/server.py --pages 200 --actions 30 --think 1.0
    python3 benchmarks/server.py --floor --rounds 3 --pages 200 --think 1.0
    python3 benchmarks/server.py --floor --rounds 3 --pages 200 --think 0 --seconds 20   # saturation
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

# A script, not a package: the shared harness lives in tests/support under the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dotfight.engine import RuleSet, apply, new_page
from dotfight.server.hub import compact_json
from tests.support.server_process import RELAXED_ACTION_BUDGET, ServerProcess, free_port

# A soft pull: short, sure ink that stays in the flicker's own half.
SOFT_PULL = 40.0
# A message not heard within this long fails the run (rather than hanging it).
RECEIVE_TIMEOUT = 30.0


def cpu_seconds(pid: int) -> float:
    """Returns the CPU time (user + system) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Returns a process's resident memory now (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def bench_server(workdir: Path) -> ServerProcess:
    """The server under test, on a fresh SQLite file in `workdir`."""
    return ServerProcess.on_sqlite(
        workdir,
        extra_args=["--no-access-log"],
        # The clients here play far faster than people (--think 0): lift the per-client flood limits.
        extra_env={
            "DOTFIGHT_HTTP_REQUEST_BURST": "1000000",
            "DOTFIGHT_PAGE_CREATION_BURST": "1000000",
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


async def run(args: argparse.Namespace, base: str, server_pid: int) -> dict[str, float]:
    """Plays the load against one server; prints and returns its figures."""
    resident_before = rss_bytes(server_pid)
    pages = await create_pages(base, args.pages)
    ws_base = base.replace("http://", "ws://")
    latencies: list[float] = []
    server_cpu = cpu_seconds(server_pid)
    own_cpu = time.process_time()
    started = time.perf_counter()
    peak = [resident_before]

    async def watch_memory() -> None:
        while True:
            peak[0] = max(peak[0], rss_bytes(server_pid))
            await asyncio.sleep(0.25)

    watcher = asyncio.create_task(watch_memory())
    made = await asyncio.gather(
        *(play(page, ws_base, args, latencies, started + args.seconds) for page in pages)
    )
    watcher.cancel()
    elapsed = time.perf_counter() - started
    server_cpu = cpu_seconds(server_pid) - server_cpu
    own_cpu = time.process_time() - own_cpu
    total = sum(made)
    ordered = sorted(latencies)
    figures = {
        "actions": float(total),
        "actions_per_s": total / elapsed,
        "cpu_ms_per_action": server_cpu / total * 1000,
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        "max_ms": ordered[-1] * 1000,
        "kb_per_page": (peak[0] - resident_before) / 1024 / args.pages,
    }
    sockets = 2 * args.pages
    print(f"  pages {args.pages} ({sockets} sockets), think {args.think} s: {total} actions, {elapsed:.1f} s")
    print(f"  throughput {figures['actions_per_s']:.0f} actions/s")
    print(
        f"  CPU: server {figures['cpu_ms_per_action']:.2f} ms/action ({server_cpu / elapsed:.0%} of a core),"
        f" clients {own_cpu / elapsed:.0%} of a core; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"  latency (send -> opponent hears): p50 {figures['p50_ms']:.1f} ms, p99 {figures['p99_ms']:.1f} ms,"
        f" max {figures['max_ms']:.1f} ms"
    )
    print(f"  memory: {figures['kb_per_page']:.0f} KB per live page (both sockets), peak resident growth")
    return figures


def floor_template(path: Path) -> None:
    """Writes the floor app's template: a quick page ready to play and one soft snipe's events, made by
    the engine, so the floor sends frames of Dotfight's own sizes."""
    state = new_page(RuleSet.preset("quick"), seed=1)
    for side, action in (
        ("blue", {"type": "quick_setup"}),
        ("blue", {"type": "ready"}),
        ("red", {"type": "ready"}),
    ):
        state, _ = apply(state, side, action)
    shooter = next(s["id"] for s in state.snapshot()["soldiers"] if s["side"] == "blue")
    snapshot = {**state.snapshot(), "mode": "live", "seed_sha256": "0" * 64, "seed": None, "bot": None}
    _, events = apply(
        state, "blue", {"type": "flick", "soldier": shooter, "kind": "snipe", "vector": [0.0, SOFT_PULL]}
    )
    path.write_text(compact_json({"snapshot": snapshot, "events": events}))


class FloorServer:
    """benchmarks/floor_app.py as a process on loopback, with the ServerProcess interface run() needs."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        template = self.workdir / "template.json"
        floor_template(template)
        command = [
            sys.executable, str(Path(__file__).with_name("floor_app.py")), "--port", str(self.port),
            "--database", str(self.workdir / "floor.sqlite3"), "--template", str(template),
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base_url}/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("the floor app did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


def one_round(
    args: argparse.Namespace, make: Callable[[Path], ServerProcess | FloorServer]
) -> dict[str, float]:
    """Starts a fresh server of one contender, plays the load against it and stops it."""
    with tempfile.TemporaryDirectory() as workdir:
        server = make(Path(workdir))
        try:
            server.start()
            assert server.process is not None
            return asyncio.run(run(args, server.base_url, server.process.pid))
        finally:
            server.stop()


def compare(results: dict[str, list[dict[str, float]]]) -> None:
    """Prints each contender's medians over the rounds and Dotfight's ratio to the floor."""
    keys = [
        ("actions_per_s", "actions/s", "{:.0f}"),
        ("cpu_ms_per_action", "server CPU ms/action", "{:.2f}"),
        ("p50_ms", "p50 send -> opponent, ms", "{:.1f}"),
        ("p99_ms", "p99 send -> opponent, ms", "{:.1f}"),
        ("kb_per_page", "KB per live page", "{:.0f}"),
    ]
    rounds = len(results["dotfight"])
    print(f"\nmedians over {rounds} interleaved rounds")
    print(f"{'figure':28} {'dotfight':>10} {'floor':>10} {'ratio':>7}")
    for key, label, form in keys:
        ours = statistics.median(r[key] for r in results["dotfight"])
        floor = statistics.median(r[key] for r in results["floor"])
        ratio = ours / floor if floor else float("nan")
        print(f"{label:28} {form.format(ours):>10} {form.format(floor):>10} {ratio:>6.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=200, help="live pages played at once (default 200)")
    parser.add_argument("--actions", type=int, default=30, help="actions per page (default 30)")
    parser.add_argument("--seconds", type=float, default=60.0, help="stop after this long (default 60)")
    parser.add_argument("--think", type=float, default=1.0, help="mean think time per move, s (default 1.0)")
    parser.add_argument(
        "--floor", action="store_true", help="also run the same-stack floor app, interleaved, and compare"
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds with --floor (default 3)")
    args = parser.parse_args()
    if not args.floor:
        print("dotfight")
        one_round(args, bench_server)
        return 0
    contenders: dict[str, Callable[[Path], ServerProcess | FloorServer]] = {
        "dotfight": bench_server,
        "floor": FloorServer,
    }
    results: dict[str, list[dict[str, float]]] = {name: [] for name in contenders}
    for number in range(args.rounds):
        order = list(contenders) if number % 2 == 0 else list(reversed(contenders))
        for name in order:
            print(f"round {number + 1}: {name}")
            results[name].append(one_round(args, contenders[name]))
    compare(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
