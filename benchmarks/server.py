"""Server benchmark: N live pages over loopback WebSockets against a real server process.

Starts `dotfight serve` on a temporary SQLite file, creates `--pages` live pages (quick preset, set up
over HTTP), connects both seats of each page (2 × pages sockets) and lets every page play flicks
alternately: each side answers the other's move after a think time (`--think` seconds on average, 0 for
as fast as possible). The flicks are soft snipes aimed at the flicker's own edge of the page, so nobody
is crossed out and every page can go on for as long as the run lasts.

Prints throughput (actions/s), the latency from sending an action to the opponent's socket receiving
its events (p50, p99, max), the server's CPU per action (and how it splits between the threads: the
event loop, the busiest other thread, which is the database writer, and the rest; from /proc, so C and
kernel time count too, which `--profile` leaves out) and its memory per live page (resident growth
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

With `--proxy nginx`, contenders also run behind a real nginx configured from deploy/nginx.conf (the
config tests/server/test_proxy_affinity.py runs: a loopback listener, the recipe's per-address limits
lifted as the app's are), every socket and request through it: on PostgreSQL both seats of a page then
land on the process its id hashes to (page affinity), beside the spread processes reached directly,
and the one-process SQLite server is the baseline behind the same nginx. nginx's CPU is counted in the
server CPU per action of the contenders behind it (and printed apart).

    python3 benchmarks/server.py --processes 2 --database postgresql --proxy nginx --rounds 2 --pages 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx
from websockets.asyncio.client import ClientConnection, connect

# A script, not a package: the shared harness lives in tests/support under the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.proc_cpu import cpu_seconds, cpu_split, stat_times
from dotfight.engine import apply, turn_options
from dotfight.server.page_view import events_on_the_wire
from dotfight.server.rooms import compact_json
from tests.support.nginx_proxy import NginxProxy
from tests.support.pages import SETUP_MOVES, engine_page_ready_to_play
from tests.support.server_process import RELAXED_ACTION_BUDGET, REPO_ROOT, ServerProcess, free_port

T = TypeVar("T")

# A soft pull: short, sure ink that stays in the flicker's own half.
SOFT_PULL = 40.0
# A message not heard within this long fails the run (rather than hanging it).
RECEIVE_TIMEOUT = 30.0
# Pages whose sockets join at once before play starts.
JOIN_BATCH = 100


def thread_cpu(pid: int) -> dict[int, tuple[float, float]]:
    """CPU seconds (user, system) of each thread of the process so far, by thread id (Linux /proc)."""
    spent: dict[int, tuple[float, float]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            spent[int(task.name)] = stat_times(task / "stat")
    return spent


def thread_split(
    pids: list[int], before: dict[int, dict[int, tuple[float, float]]]
) -> tuple[float, float, float]:
    """Splits the CPU the processes used since `before` (their `thread_cpu`) into the main thread's (the
    event loop), the busiest other thread's of each (the database writer) and all the rest."""
    main = busiest = rest = 0.0
    for pid in pids:
        now = thread_cpu(pid)
        used = {tid: sum(spent) - sum(before[pid].get(tid, (0.0, 0.0))) for tid, spent in now.items()}
        main += used.pop(pid, 0.0)
        ranked = sorted(used.values(), reverse=True)
        busiest += ranked[0] if ranked else 0.0
        rest += sum(ranked[1:])
    return main, busiest, rest


def rss_bytes(pid: int) -> int:
    """Returns a process's resident memory now (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


# The clients here play far faster than people (--think 0), all from one address: lift the per-client
# flood limits, the page-creation burst, the sockets per address and the HTTP connections per peer (the
# hardening's caps; every socket is an HTTP connection until its handshake is upgraded).
BENCH_ENV = {
    "DOTFIGHT_HTTP_REQUEST_BURST": "1000000",
    "DOTFIGHT_PAGE_CREATION_BURST": "1000000",
    "DOTFIGHT_WS_MESSAGES_PER_SECOND": "100000",
    "DOTFIGHT_WS_MESSAGE_BURST": "100000",
    "DOTFIGHT_WS_MAX_SOCKETS_PER_ADDRESS": "1000000",
    "DOTFIGHT_HTTP_MAX_CONNECTIONS_PER_PEER": "1000000",
    **RELAXED_ACTION_BUDGET,
}


def tree_env(tree: Path) -> dict[str, str]:
    """The servers' environment for running `dotfight serve` from another source tree (`--baseline`)."""
    return {**BENCH_ENV, "PYTHONPATH": str(tree)}


def bench_server(workdir: Path) -> ServerProcess:
    """The server under test, on a fresh SQLite file in `workdir`."""
    return ServerProcess.on_sqlite(workdir, extra_args=["--no-access-log"], extra_env=BENCH_ENV)


class PostgresServers:
    """`processes` servers on one throwaway PostgreSQL cluster, with the interface run() needs."""

    def __init__(self, workdir: Path, processes: int, tree: Path | None = None) -> None:
        from tests.store.conftest import PostgresCluster, find_postgres_bindir

        bindir = find_postgres_bindir()
        if bindir is None:
            raise SystemExit("PostgreSQL's server programs (initdb, pg_ctl) are not installed")
        self.cluster = PostgresCluster(bindir)
        self.workdir = workdir
        self.processes = processes
        self.tree = tree  # another source tree's `dotfight serve` (`--baseline`), or None: this one
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
                extra_env=BENCH_ENV if self.tree is None else tree_env(self.tree),
                cwd=self.tree or REPO_ROOT,
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
    """One live page and both of its sockets, with what its play made and how long it thought."""

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
        self.made = 0
        self.thinking = 0.0  # seconds slept between moves
        self.active = 0.0  # seconds from the first move to the last answer
        self.timeline: list[tuple[float, float]] = []  # (sent at, latency) of each move


# The client shares the machine's two cores with the server under test, so it reads as little as it
# can: a frame's type is told by its first bytes (the server writes compact JSON, "type" first), and
# only the events message the opponent hears is parsed (for the turn it opens).
EVENTS_PREFIX = '{"type":"events"'
ACK_PREFIX = '{"type":"ack"'
ERROR_PREFIX = '{"type":"error"'


async def receive_events(connection: ClientConnection, version: int) -> dict[str, Any]:
    """Waits for the events message of `version` (presence and acks are skipped)."""
    while True:
        text = await connection.recv()
        assert isinstance(text, str)
        if text.startswith(EVENTS_PREFIX):
            message: dict[str, Any] = json.loads(text)
            if message["version"] == version:
                return message
        elif text.startswith(ERROR_PREFIX):
            raise RuntimeError(f"refused: {text[:300]}")


async def receive_ack(connection: ClientConnection, move_id: str) -> None:
    """Waits for the ack of `move_id` (the sender's own copy of the events is skipped unread)."""
    while True:
        text = await connection.recv()
        assert isinstance(text, str)
        if text.startswith(ACK_PREFIX):
            if json.loads(text)["move_id"] == move_id:
                return
        elif text.startswith(ERROR_PREFIX):
            raise RuntimeError(f"refused: {text[:300]}")


async def join(page: Page, ws_bases: dict[str, str]) -> None:
    """Opens both seats' sockets of a page and waits for each one's state (`ws_bases`: side -> ws://...)."""
    for side, token in page.seats.items():
        connection = await connect(f"{ws_bases[side]}/api/pages/{page.id}/ws", max_queue=None)
        await connection.send(json.dumps({"type": "hello", "token": token, "version": page.version}))
        page.sockets[side] = connection
    for connection in page.sockets.values():
        # The answer to a hello: the state, or (a client at a version the server knows) the events since.
        async with asyncio.timeout(RECEIVE_TIMEOUT):
            while not str(await connection.recv()).startswith(('{"type":"state"', EVENTS_PREFIX)):
                pass


async def play(page: Page, args: argparse.Namespace, latencies: list[float], stop_at: float) -> None:
    """Plays one page until it made `args.actions` actions or the time is up."""
    rng = random.Random(page.id)
    began = time.perf_counter()
    while page.made < args.actions and time.perf_counter() < stop_at:
        if args.think > 0:
            pause = args.think * rng.uniform(0.5, 1.5)
            page.thinking += pause
            await asyncio.sleep(pause)
        side, other = page.side, ("red" if page.side == "blue" else "blue")
        soldier = page.alive[side][page.made % len(page.alive[side])]
        direction = 1.0 if side == "blue" else -1.0  # blue owns the bottom half: aim down
        move_id = f"{page.id}-{page.version}"
        vector = [0.0, direction * SOFT_PULL]
        action = {"type": "flick", "soldier": soldier, "kind": "snipe", "vector": vector}
        sent = time.perf_counter()
        # A move not answered in time fails the run rather than hanging it.
        async with asyncio.timeout(RECEIVE_TIMEOUT):
            await page.sockets[side].send(
                json.dumps({"type": "action", "action": action, "version": page.version, "move_id": move_id})
            )
            heard = await receive_events(page.sockets[other], page.version + 1)
            heard_at = time.perf_counter()
            latencies.append(heard_at - sent)
            page.timeline.append((sent, heard_at - sent))
            await receive_ack(page.sockets[side], move_id)
        page.version = heard["version"]
        for event in heard["events"]:
            if event["type"] == "turn":
                page.side = event["side"]
        page.made += 1
    page.active = time.perf_counter() - began


async def create_pages(base: str, count: int) -> list[Page]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:

        async def one() -> Page:
            created = (await client.post("/api/pages", json={"preset": "quick", "mode": "live"})).json()
            page_id, seats = created["id"], created["seats"]
            version = 0
            for side, action in SETUP_MOVES:
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
    proxy_pids: list[int] | None = None,
) -> dict[str, float]:
    """Plays the load against the servers (page i's blue socket on server i, red's on server i + 1,
    round the list); prints and returns the figures (CPU and memory summed over the servers; the CPU of
    `proxy_pids`, the proxy in front of them, is counted in the server CPU too)."""
    proxy_pids = proxy_pids or []

    def resident() -> int:
        return sum(rss_bytes(pid) for pid in server_pids)

    def server_cpu_now() -> float:
        return sum(cpu_seconds(pid) for pid in server_pids)

    def proxy_cpu_now() -> float:
        return sum(cpu_seconds(pid) for pid in proxy_pids)

    resident_before = resident()
    pages = await create_pages(bases[0], args.pages)
    ws = [base.replace("http://", "ws://") for base in bases]
    # Every socket joins (and hears its state) before the clock starts: the moves timed are play alone.
    for first in range(0, len(pages), JOIN_BATCH):
        await asyncio.gather(
            *(
                join(page, {"blue": ws[number % len(ws)], "red": ws[(number + 1) % len(ws)]})
                for number, page in enumerate(pages[first : first + JOIN_BATCH], start=first)
            )
        )
    joined_kb = (resident() - resident_before) / 1024 / args.pages
    latencies: list[float] = []
    # The client's own garbage collector must not stall it (thousands of sockets and futures): what was
    # made before play is frozen out of the collections, and none runs during play.
    gc.collect()
    gc.freeze()
    gc.disable()
    profiler = start_profiler(args, server_pids)
    server_cpu, proxy_cpu = server_cpu_now(), proxy_cpu_now()
    system_cpu = sum(cpu_split(pid)[1] for pid in server_pids)
    threads_before = {pid: thread_cpu(pid) for pid in server_pids}
    db_cpu = database_cpu() if database_cpu is not None else 0.0
    own_cpu = time.process_time()
    started = time.perf_counter()
    peak = [resident_before]

    async def watch_memory() -> None:
        while True:
            peak[0] = max(peak[0], resident())
            await asyncio.sleep(0.25)

    watcher = asyncio.create_task(watch_memory())
    await asyncio.gather(*(play(page, args, latencies, started + args.seconds) for page in pages))
    watcher.cancel()
    elapsed = time.perf_counter() - started
    proxy_cpu = proxy_cpu_now() - proxy_cpu
    server_cpu = server_cpu_now() - server_cpu + proxy_cpu
    system_cpu = sum(cpu_split(pid)[1] for pid in server_pids) - system_cpu
    loop_cpu, writer_cpu, rest_cpu = thread_split(server_pids, threads_before)
    if database_cpu is not None:
        db_cpu = database_cpu() - db_cpu
    own_cpu = time.process_time() - own_cpu
    stop_profiler(profiler)
    gc.enable()
    for page in pages:
        for connection in page.sockets.values():
            await connection.close()
    total = sum(page.made for page in pages)
    ordered = sorted(latencies)
    # Per second of the run: the p99 of the moves sent in it, to tell a stall from a steady backlog.
    per_second: dict[int, list[float]] = {}
    for page in pages:
        for sent, latency in page.timeline:
            per_second.setdefault(int(sent - started), []).append(latency)
    worst = sorted(
        ((second, sorted(values)[int(len(values) * 0.99)] * 1000) for second, values in per_second.items()),
        key=lambda item: -item[1],
    )[:3]
    figures = {
        "actions": float(total),
        "actions_per_s": total / elapsed,
        "cpu_ms_per_action": server_cpu / total * 1000,
        "loop_cpu_ms_per_action": loop_cpu / total * 1000,
        "writer_cpu_ms_per_action": writer_cpu / total * 1000,
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        "max_ms": ordered[-1] * 1000,
        "kb_per_page": (peak[0] - resident_before) / 1024 / args.pages,
        "joined_kb_per_page": joined_kb,
    }
    if args.think > 0:
        # Offered: each page's pace had every move been answered at once (its moves over its thinking);
        # done: its moves over the time it played. A server that keeps up has done ≈ offered.
        figures["offered_per_s"] = sum(page.made / page.thinking for page in pages if page.thinking)
        figures["done_per_s"] = sum(page.made / page.active for page in pages if page.active)
        figures["kept_up"] = figures["done_per_s"] / figures["offered_per_s"]
    sockets = 2 * args.pages
    print(f"  pages {args.pages} ({sockets} sockets), think {args.think} s: {total} actions, {elapsed:.1f} s")
    print(f"  throughput {figures['actions_per_s']:.0f} actions/s")
    print(
        f"  CPU: server {figures['cpu_ms_per_action']:.2f} ms/action ({server_cpu / elapsed:.0%} of a core;"
        f" {system_cpu / server_cpu if server_cpu else 0:.0%} of it in the kernel),"
        f" clients {own_cpu / elapsed:.0%} of a core; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"  threads: the event loop {figures['loop_cpu_ms_per_action']:.2f} ms/action, the busiest other"
        f" (the database writer) {figures['writer_cpu_ms_per_action']:.2f},"
        f" the rest {rest_cpu / total * 1000:.2f}"
    )
    print(
        f"  latency (send -> opponent hears): p50 {figures['p50_ms']:.1f} ms, p99 {figures['p99_ms']:.1f} ms,"
        f" max {figures['max_ms']:.1f} ms"
    )
    print("  worst seconds of the run by p99: " + ", ".join(f"second {s}: {p:.0f} ms" for s, p in worst))
    print(
        f"  memory: {figures['kb_per_page']:.0f} KB per live page (both sockets), peak resident growth;"
        f" {joined_kb:.0f} KB once every socket had joined"
    )
    if args.think > 0:
        print(
            f"  pace: offered {figures['offered_per_s']:.0f} actions/s, done {figures['done_per_s']:.0f}"
            f" ({figures['kept_up']:.1%}; below ~98 % the server is falling behind)"
        )
    else:
        print("  saturation: every page plays its next move as soon as it hears the last one")
    if proxy_pids:
        figures["proxy_cpu_ms_per_action"] = proxy_cpu / total * 1000
        print(
            f"  nginx CPU (counted in the server's): {figures['proxy_cpu_ms_per_action']:.2f} ms/action"
            f" ({proxy_cpu / elapsed:.0%} of a core)"
        )
    if database_cpu is not None:
        figures["db_cpu_ms_per_action"] = db_cpu / total * 1000
        print(
            f"  PostgreSQL CPU: {figures['db_cpu_ms_per_action']:.2f} ms/action"
            f" ({db_cpu / elapsed:.0%} of a core)"
        )
    return figures


PY_SPY_MISSING = "--profile needs py-spy, which is not installed: pip install -e '.[bench]'"


def start_profiler(args: argparse.Namespace, pids: list[int]) -> list[subprocess.Popen[bytes]]:
    """With `--profile DIR`: py-spy samples each server process for the run (every thread at 100 Hz, only
    samples holding the GIL: where the Python CPU goes; non-blocking, so the server is not paused), into
    DIR as collapsed stacks (read them with benchmarks/profile_summary.py)."""
    if args.profile is None:
        return []
    args.profile.mkdir(parents=True, exist_ok=True)
    args.profile_runs = getattr(args, "profile_runs", 0) + 1
    profilers = []
    for pid in pids:
        out = args.profile / f"{args.profile_runs:02d}-{args.contender}-{pid}.txt"
        command = [
            "py-spy", "record", "--pid", str(pid), "--threads", "--format", "raw", "--rate", "100",
            "--nonblocking", "--gil",
            "--duration", str(int(args.seconds) + 5), "--output", str(out),
        ]  # fmt: skip
        profilers.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return profilers


def stop_profiler(profilers: list[subprocess.Popen[bytes]]) -> None:
    """Stops the samplers (py-spy writes its file on SIGINT)."""
    for profiler in profilers:
        profiler.send_signal(signal.SIGINT)
    for profiler in profilers:
        profiler.wait(30)


def floor_template(path: Path) -> None:
    """Writes the floor app's template: a quick page ready to play (with its turn options, as Dotfight's
    snapshot has them) and a soft snipe's events by each side as Dotfight sends them (the last turn event
    carrying the options of the opponent's turn), so the floor sends frames of Dotfight's own sizes."""
    state = engine_page_ready_to_play()
    snapshot = {
        **state.snapshot(), "mode": "live", "seed_sha256": "0" * 64, "seed": None, "bot": None,
        "options": turn_options(state),
    }  # fmt: skip
    events: dict[str, list[dict[str, Any]]] = {}
    for side, direction in (("blue", 1.0), ("red", -1.0)):
        shooter = next(s["id"] for s in state.snapshot()["soldiers"] if s["side"] == side)
        flick = {"type": "flick", "soldier": shooter, "kind": "snipe", "vector": [0.0, direction * SOFT_PULL]}
        state, made = apply(state, side, flick)
        events[side] = events_on_the_wire(state, made)
    path.write_text(compact_json({"snapshot": snapshot, "events": events}))


class FloorServer:
    """benchmarks/floor_app.py as a process on loopback, with the ServerProcess interface run() needs."""

    def __init__(self, workdir: Path, ws: str | None = None) -> None:
        self.workdir = workdir
        self.ws = ws
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
            *(["--ws", self.ws] if self.ws else []),
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


class ProxiedServers:
    """A contender's servers behind nginx configured from deploy/nginx.conf (`--proxy nginx`): every
    socket and request goes through the proxy, which sends each page to one process (page affinity)."""

    def __init__(self, inner: ServerProcess | PostgresServers) -> None:
        self.inner = inner
        self.proxy: NginxProxy | None = None

    @property
    def servers(self) -> list[ServerProcess]:
        return self.inner.servers if isinstance(self.inner, PostgresServers) else [self.inner]

    def start(self) -> None:
        self.inner.start()
        self.proxy = NginxProxy(
            [f"127.0.0.1:{server.port}" for server in self.servers], lift_per_address_limits=True
        )
        self.proxy.start()

    @property
    def base_urls(self) -> list[str]:
        assert self.proxy is not None
        return [self.proxy.base_url]

    @property
    def pids(self) -> list[int]:
        return [server.process.pid for server in self.servers if server.process is not None]

    @property
    def proxy_pids(self) -> list[int]:
        assert self.proxy is not None
        return self.proxy.pids()

    @property
    def database_cpu(self) -> Callable[[], float] | None:
        return self.inner.database_cpu if isinstance(self.inner, PostgresServers) else None

    def stop(self) -> None:
        try:
            if self.proxy is not None:
                self.proxy.stop()
        finally:
            self.inner.stop()


Contender = Callable[[Path], ServerProcess | FloorServer | PostgresServers | ProxiedServers]


def one_round(args: argparse.Namespace, make: Contender) -> dict[str, float]:
    """Starts a fresh server (or servers) of one contender, plays the load against it and stops it."""
    with tempfile.TemporaryDirectory() as workdir:
        server = make(Path(workdir))
        try:
            server.start()
            if isinstance(server, PostgresServers | ProxiedServers):
                proxy_pids = server.proxy_pids if isinstance(server, ProxiedServers) else None
                try:
                    return run_client(
                        run(args, server.base_urls, server.pids, server.database_cpu, proxy_pids)
                    )
                except Exception:
                    for process in server.servers:
                        print(f"--- {process.log_path.name}\n{process.log_text()[-3000:]}", file=sys.stderr)
                    raise
            assert server.process is not None
            return run_client(run(args, [server.base_url], [server.process.pid]))
        finally:
            server.stop()


def compare(results: dict[str, list[dict[str, float]]], base: str) -> None:
    """Prints each contender's medians over the rounds and each one's ratio to `base`."""
    keys = [
        ("actions_per_s", "actions/s", "{:.0f}"),
        ("offered_per_s", "offered actions/s", "{:.0f}"),
        ("kept_up", "done / offered", "{:.3f}"),
        ("cpu_ms_per_action", "server CPU ms/action", "{:.3f}"),
        ("proxy_cpu_ms_per_action", "  of it nginx, ms/action", "{:.3f}"),
        ("loop_cpu_ms_per_action", "  event loop thread", "{:.3f}"),
        ("writer_cpu_ms_per_action", "  busiest other thread", "{:.3f}"),
        ("db_cpu_ms_per_action", "PostgreSQL's own, ms/action", "{:.3f}"),
        ("p50_ms", "p50 send -> opponent, ms", "{:.1f}"),
        ("p99_ms", "p99 send -> opponent, ms", "{:.1f}"),
        ("kb_per_page", "KB per live page (peak)", "{:.0f}"),
        ("joined_kb_per_page", "KB per live page (joined)", "{:.0f}"),
    ]
    names = [name for name in results if name != base] + [base]
    rounds = len(results[base])
    print(f"\nmedians over {rounds} interleaved rounds (ratio: to {base})")
    # Each column as wide as its name (the proxied contenders' names are long), at least as before.
    width = {name: max(14, len(name) + 2) for name in names}
    ratio_width = {name: max(16, len(name) + len(base) + 3) for name in names}
    print(f"{'figure':28}" + "".join(f"{name:>{width[name]}}" for name in names) + "".join(
        f"{name + '/' + base:>{ratio_width[name]}}" for name in names[:-1]
    ))  # fmt: skip
    for key, label, form in keys:
        if not any(key in figures for runs in results.values() for figures in runs):
            continue
        medians = {name: statistics.median(r.get(key, 0.0) for r in results[name]) for name in names}
        cells = "".join(f"{form.format(medians[name]):>{width[name]}}" for name in names)
        # A figure the base has not (nginx's CPU with the base reached directly) has no ratio.
        ratio = {name: f"{medians[name] / medians[base]:.2f}x" if medians[base] else "-" for name in names}
        ratios = "".join(f"{ratio[name]:>{ratio_width[name]}}" for name in names[:-1])
        print(f"{label:28}{cells}{ratios}")


class BaselineServer(ServerProcess):
    """`dotfight serve` from another source tree (`--baseline DIR`, e.g. `git archive main` unpacked):
    the code before a change, run beside the code after it in the same rounds."""

    def __init__(self, tree: Path, workdir: Path) -> None:
        super().__init__(
            f"sqlite:///{workdir / 'pages.sqlite3'}",
            workdir / "server.log",
            extra_args=["--no-access-log"],
            extra_env=tree_env(tree),
            cwd=tree,
        )


def raise_open_files_limit() -> None:
    """Lifts the soft limit on open files to the hard one (2000 sockets need more than 1024); the servers
    started from here inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=200, help="live pages played at once (default 200)")
    parser.add_argument("--actions", type=int, default=30, help="actions per page (default 30)")
    parser.add_argument("--seconds", type=float, default=60.0, help="stop after this long (default 60)")
    parser.add_argument("--think", type=float, default=1.0, help="mean think time per move, s (default 1.0)")
    parser.add_argument(
        "--saturate", action="store_true",
        help="saturation: no think time, every page plays for --seconds (as many actions as it can)",
    )  # fmt: skip
    parser.add_argument(
        "--floor", action="store_true", help="also run the same-stack floor app, interleaved, and compare"
    )
    parser.add_argument(
        "--baseline", type=Path, default=None,
        help="also run `dotfight serve` from this source tree (the code before a change), interleaved;"
        " with --database postgresql, as the same spread processes (and behind nginx too with --proxy nginx)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds with --floor (default 3)")
    parser.add_argument(
        "--only", default=None,
        help="play only these contenders, comma-separated (e.g. 'postgresql×2 nginx,postgresql×2 nginx"
        " before'): two side by side, with nothing between them to leave the machine warmer for one",
    )  # fmt: skip
    parser.add_argument(
        "--profile", type=Path, default=None,
        help="sample each server with py-spy during play; collapsed stacks into this directory",
    )  # fmt: skip
    parser.add_argument(
        "--ws", default=None, choices=("websockets", "websockets-sansio", "wsproto"),
        help="uvicorn's WebSocket implementation for the floor app (default: auto, i.e. websockets-sansio)",
    )  # fmt: skip
    parser.add_argument(
        "--processes", type=int, default=1, help="server processes sharing the database (default 1)"
    )
    parser.add_argument(
        "--database", choices=("sqlite", "postgresql"), default="sqlite",
        help="the servers' database (default sqlite; postgresql: a throwaway cluster)",
    )  # fmt: skip
    parser.add_argument(
        "--proxy", choices=("nginx",), default=None,
        help="also run the contenders behind nginx configured from deploy/nginx.conf (page affinity)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.profile is not None and shutil.which("py-spy") is None:
        # Checked before any server starts: a missing sampler would otherwise fail the run mid-way.
        parser.error(PY_SPY_MISSING)
    if args.saturate:
        args.think, args.actions = 0.0, 10**9
    if args.processes > 1 and args.database != "postgresql":
        parser.error("live play across processes needs --database postgresql")
    raise_open_files_limit()
    contenders: dict[str, Contender] = {}
    if args.database == "postgresql":
        name = f"postgresql×{args.processes}"
        processes = args.processes
        contenders = {name: lambda workdir: PostgresServers(workdir, processes), "sqlite×1": bench_server}
        base = "sqlite×1"
        if args.baseline is not None:
            # The code before a change on the same spread processes: their CPU and PostgreSQL's compared.
            tree = args.baseline.resolve()
            contenders[f"{name} before"] = lambda workdir: PostgresServers(workdir, processes, tree)
        if args.proxy == "nginx":
            # Affinity behind nginx against the one process behind the same nginx; the spread
            # processes, reached directly, beside them.
            contenders = {
                name: contenders[name],
                f"{name} nginx": lambda workdir: ProxiedServers(PostgresServers(workdir, processes)),
                "sqlite×1 nginx": lambda workdir: ProxiedServers(bench_server(workdir)),
            }
            if args.baseline is not None:  # the code before a change behind the same nginx, beside them
                before = args.baseline.resolve()
                contenders[f"{name} nginx before"] = lambda workdir: ProxiedServers(
                    PostgresServers(workdir, processes, before)
                )
            base = "sqlite×1 nginx"
    elif args.proxy == "nginx":
        contenders = {"dotfight nginx": lambda workdir: ProxiedServers(bench_server(workdir))}
        contenders["dotfight"] = bench_server
        base = "dotfight"
    else:
        contenders["dotfight"] = bench_server
        if args.baseline is not None:
            tree = args.baseline.resolve()
            contenders["before"] = lambda workdir: BaselineServer(tree, workdir)
        if args.floor:
            contenders["floor"] = lambda workdir: FloorServer(workdir, args.ws)
        base = "floor" if args.floor else "before" if args.baseline is not None else "dotfight"
    if args.only is not None:
        wanted = [name.strip() for name in args.only.split(",")]
        unknown = [name for name in wanted if name not in contenders]
        if unknown:
            parser.error(f"no contender {unknown} here; there are {list(contenders)}")
        contenders = {name: contenders[name] for name in wanted}
        base = base if base in contenders else wanted[-1]
    if len(contenders) == 1:
        [(args.contender, make)] = contenders.items()
        print(args.contender)
        one_round(args, make)
        return 0
    compare(interleaved(args, contenders, one_round), base)
    return 0


def interleaved(
    args: argparse.Namespace,
    contenders: dict[str, Contender],
    play: Callable[[argparse.Namespace, Contender], dict[str, float]],
) -> dict[str, list[dict[str, float]]]:
    """Plays `args.rounds` rounds of every contender (`play(args, make)`), the order reversed every other
    round; returns each one's figures, round by round."""
    results: dict[str, list[dict[str, float]]] = {name: [] for name in contenders}
    for number in range(args.rounds):
        order = list(contenders) if number % 2 == 0 else list(reversed(contenders))
        for name in order:
            print(f"round {number + 1}: {name}", flush=True)
            args.contender = name
            results[name].append(play(args, contenders[name]))
    return results


def run_client(main_coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs the benchmark's client on uvloop when it is installed (it is uvicorn's own loop): the client
    shares the two cores with the server it measures, and asyncio's own loop costs it more CPU."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main_coroutine)
    return uvloop.run(main_coroutine)


if __name__ == "__main__":
    sys.exit(main())
