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

With `--processes N --database postgresql`, the server is N `dotfight serve` processes on one throwaway
PostgreSQL cluster (started and removed by the benchmark, as the storage tests do): each page's blue
socket is on one process and red's on the next, so every move reaches the opponent through the
cross-process fan-out (LISTEN/NOTIFY). Its rounds are interleaved with the one-process SQLite server's,
and both contenders' medians and the ratio are printed. CPU per action is the sum over the server
processes (PostgreSQL's own CPU is printed beside it, not included).

    python3 benchmarks/server.py --processes 2 --database postgresql --rounds 2 --pages 200 --think 1.0
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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


# The clients here play far faster than people (--think 0), all from one address: lift the per-client
# flood limits, the page-creation burst and the sockets per address (the hardening's caps).
BENCH_ENV = {
    "DOTFIGHT_HTTP_REQUEST_BURST": "1000000",
    "DOTFIGHT_PAGE_CREATION_BURST": "1000000",
    "DOTFIGHT_WS_MESSAGES_PER_SECOND": "100000",
    "DOTFIGHT_WS_MESSAGE_BURST": "100000",
    "DOTFIGHT_WS_MAX_SOCKETS_PER_ADDRESS": "1000000",
    **RELAXED_ACTION_BUDGET,
}


def bench_server(workdir: Path) -> ServerProcess:
    """The server under test, on a fresh SQLite file in `workdir`."""
    return ServerProcess.on_sqlite(workdir, extra_args=["--no-access-log"], extra_env=BENCH_ENV)


class PostgresServers:
    """`processes` servers on one throwaway PostgreSQL cluster, with the interface run() needs."""

    def __init__(self, workdir: Path, processes: int) -> None:
        from tests.store.conftest import PostgresCluster, find_postgres_bindir

        bindir = find_postgres_bindir()
        if bindir is None:
            raise SystemExit("PostgreSQL's server programs (initdb, pg_ctl) are not installed")
        self.cluster = PostgresCluster(bindir)
        self.workdir = workdir
        self.processes = processes
        self.servers: list[ServerProcess] = []

    def start(self) -> None:
        self.cluster.create()
        self.cluster.start_server()
        url = self.cluster.new_database()
        for number in range(self.processes):
            server = ServerProcess(
                url,
                self.workdir / f"server-{number}.log",
                extra_args=["--no-access-log"],
                extra_env=BENCH_ENV,
            )
            server.start()  # one after the other: the first migrates the database
            self.servers.append(server)

    @property
    def base_urls(self) -> list[str]:
        return [server.base_url for server in self.servers]

    @property
    def pids(self) -> list[int]:
        return [server.process.pid for server in self.servers if server.process is not None]

    def database_cpu(self) -> float:
        """CPU seconds used so far by the cluster's processes (postmaster and backends)."""
        pid_file = self.cluster.data / "postmaster.pid"
        postmaster = int(pid_file.read_text().split()[0])
        answer = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True)
        pids = [postmaster, *(int(pid) for pid in answer.stdout.split())]
        total = 0.0
        for pid in pids:
            with contextlib.suppress(OSError):  # a backend that ended meanwhile
                total += cpu_seconds(pid)
        return total

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        self.cluster.remove()


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
    page: Page, ws_bases: dict[str, str], args: argparse.Namespace, latencies: list[float], stop_at: float
) -> int:
    """Plays one page until it made `args.actions` actions or the time is up; returns actions made.
    Each side's socket goes to its own server (`ws_bases`: side -> ws://host:port)."""
    for side, token in page.seats.items():
        connection = await connect(f"{ws_bases[side]}/api/pages/{page.id}/ws", max_queue=None)
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


async def run(
    args: argparse.Namespace,
    bases: list[str],
    server_pids: list[int],
    database_cpu: Callable[[], float] | None = None,
) -> dict[str, float]:
    """Plays the load against the servers (page i's blue socket on server i, red's on server i + 1,
    round the list); prints and returns the figures (CPU and memory summed over the servers)."""

    def resident() -> int:
        return sum(rss_bytes(pid) for pid in server_pids)

    def server_cpu_now() -> float:
        return sum(cpu_seconds(pid) for pid in server_pids)

    resident_before = resident()
    pages = await create_pages(bases[0], args.pages)
    ws = [base.replace("http://", "ws://") for base in bases]
    latencies: list[float] = []
    server_cpu = server_cpu_now()
    db_cpu = database_cpu() if database_cpu is not None else 0.0
    own_cpu = time.process_time()
    started = time.perf_counter()
    peak = [resident_before]

    async def watch_memory() -> None:
        while True:
            peak[0] = max(peak[0], resident())
            await asyncio.sleep(0.25)

    watcher = asyncio.create_task(watch_memory())
    made = await asyncio.gather(
        *(
            play(
                page,
                {"blue": ws[number % len(ws)], "red": ws[(number + 1) % len(ws)]},
                args,
                latencies,
                started + args.seconds,
            )
            for number, page in enumerate(pages)
        )
    )
    watcher.cancel()
    elapsed = time.perf_counter() - started
    server_cpu = server_cpu_now() - server_cpu
    if database_cpu is not None:
        db_cpu = database_cpu() - db_cpu
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
    if database_cpu is not None:
        figures["db_cpu_ms_per_action"] = db_cpu / total * 1000
        print(
            f"  PostgreSQL CPU: {figures['db_cpu_ms_per_action']:.2f} ms/action"
            f" ({db_cpu / elapsed:.0%} of a core)"
        )
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


Contender = Callable[[Path], ServerProcess | FloorServer | PostgresServers]


def one_round(args: argparse.Namespace, make: Contender) -> dict[str, float]:
    """Starts a fresh server (or servers) of one contender, plays the load against it and stops it."""
    with tempfile.TemporaryDirectory() as workdir:
        server = make(Path(workdir))
        try:
            server.start()
            if isinstance(server, PostgresServers):
                try:
                    return asyncio.run(run(args, server.base_urls, server.pids, server.database_cpu))
                except Exception:
                    for process in server.servers:
                        print(f"--- {process.log_path.name}\n{process.log_text()[-3000:]}", file=sys.stderr)
                    raise
            assert server.process is not None
            return asyncio.run(run(args, [server.base_url], [server.process.pid]))
        finally:
            server.stop()


def compare(results: dict[str, list[dict[str, float]]], ours: str = "dotfight", base: str = "floor") -> None:
    """Prints each contender's medians over the rounds and the ratio of `ours` to `base`."""
    keys = [
        ("actions_per_s", "actions/s", "{:.0f}"),
        ("cpu_ms_per_action", "server CPU ms/action", "{:.2f}"),
        ("p50_ms", "p50 send -> opponent, ms", "{:.1f}"),
        ("p99_ms", "p99 send -> opponent, ms", "{:.1f}"),
        ("kb_per_page", "KB per live page", "{:.0f}"),
    ]
    rounds = len(results[ours])
    print(f"\nmedians over {rounds} interleaved rounds")
    print(f"{'figure':28} {ours:>12} {base:>12} {'ratio':>7}")
    for key, label, form in keys:
        mine = statistics.median(r[key] for r in results[ours])
        theirs = statistics.median(r[key] for r in results[base])
        ratio = mine / theirs if theirs else float("nan")
        print(f"{label:28} {form.format(mine):>12} {form.format(theirs):>12} {ratio:>6.2f}x")


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
    parser.add_argument(
        "--processes", type=int, default=1, help="server processes sharing the database (default 1)"
    )
    parser.add_argument(
        "--database", choices=("sqlite", "postgresql"), default="sqlite",
        help="the servers' database (default sqlite; postgresql: a throwaway cluster)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.processes > 1 and args.database != "postgresql":
        parser.error("live play across processes needs --database postgresql")
    contenders: dict[str, Contender]
    if args.database == "postgresql":
        name = f"postgresql×{args.processes}"
        processes = args.processes
        contenders = {name: lambda workdir: PostgresServers(workdir, processes), "sqlite×1": bench_server}
        ours, base = name, "sqlite×1"
    elif args.floor:
        contenders = {"dotfight": bench_server, "floor": FloorServer}
        ours, base = "dotfight", "floor"
    else:
        print("dotfight")
        one_round(args, bench_server)
        return 0
    results: dict[str, list[dict[str, float]]] = {name: [] for name in contenders}
    for number in range(args.rounds):
        order = list(contenders) if number % 2 == 0 else list(reversed(contenders))
        for name in order:
            print(f"round {number + 1}: {name}")
            results[name].append(one_round(args, contenders[name]))
    compare(results, ours, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
