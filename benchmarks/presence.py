"""Presence benchmark: N watcher sockets join one page of a real server; counts the presence messages
they receive and the server's CPU time for the joins (issue 9, item 7: 1,000 watchers used to cost
500,500 presence messages and 11 s of CPU).

    python3 benchmarks/presence.py --watchers 1000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

# A script, not a package: the shared harness lives in tests/support under the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.server import cpu_seconds
from tests.support.server_process import ServerProcess

BATCH = 50


async def count_presence(ws: ClientConnection, quiet_s: float) -> int:
    """Counts presence messages until none has come for `quiet_s` seconds."""
    count = 0
    while True:
        try:
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout=quiet_s))
        except TimeoutError:
            return count
        count += message["type"] == "presence"


async def run(server: ServerProcess, watchers: int, pid: int) -> None:
    page_id = server.http.post("/api/pages", json={"mode": "live"}).json()["id"]
    url = server.ws_url(page_id)
    sockets: list[ClientConnection] = []
    cpu = cpu_seconds(pid)
    started = time.perf_counter()
    hello = json.dumps({"type": "hello", "token": None, "version": None})
    for start in range(0, watchers, BATCH):
        batch = await asyncio.gather(*(connect(url) for _ in range(min(BATCH, watchers - start))))
        await asyncio.gather(*(ws.send(hello) for ws in batch))
        sockets += batch
    counts = await asyncio.gather(*(count_presence(ws, 3.0) for ws in sockets))
    elapsed = time.perf_counter() - started - 3.0
    cpu = cpu_seconds(pid) - cpu
    await asyncio.gather(*(ws.close() for ws in sockets))
    print(
        f"watchers {watchers}: {sum(counts)} presence messages, server CPU {cpu:.2f} s, joins {elapsed:.1f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--watchers", type=int, default=1000, help="watcher sockets on one page (default 1000)"
    )
    args = parser.parse_args()
    caps = str(args.watchers + 10)
    with tempfile.TemporaryDirectory() as workdir:
        server = ServerProcess.on_sqlite(
            Path(workdir),
            extra_args=["--no-access-log"],
            extra_env={
                "DOTFIGHT_WS_MAX_SOCKETS_PER_PAGE": caps,
                "DOTFIGHT_WS_MAX_SOCKETS_PER_ADDRESS": caps,
                # Each watcher is an HTTP connection from the same address until its handshake upgrades.
                "DOTFIGHT_HTTP_MAX_CONNECTIONS_PER_PEER": caps,
            },
        )
        try:
            server.start()
            assert server.process is not None
            asyncio.run(run(server, args.watchers, server.process.pid))
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
