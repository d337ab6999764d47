"""A real Dotfight server (`python3 -m dotfight.cli serve`) on a free loopback port, as a subprocess:
started, polled on /api/health until it answers, and stopped or killed."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx

from dotfight.server.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
# The action budgets (per page and per client address) lifted, for clients that play far faster than
# people from one address (tests, benchmarks); the tests of the budgets set their own.
RELAXED_ACTION_BUDGET = {
    "DOTFIGHT_ACTIONS_PER_PAGE_PER_SECOND": "100000",
    "DOTFIGHT_ACTIONS_PER_PAGE_BURST": "100000",
    "DOTFIGHT_ACTIONS_PER_ADDRESS_PER_SECOND": "100000",
    "DOTFIGHT_ACTIONS_PER_ADDRESS_BURST": "100000",
}
# How long a test client keeps an idle connection for reuse: well under the server's keep-alive timeout
# (the `http_keep_alive_timeout` default). At equal timeouts a request sent on a connection the server is
# just closing is reset (ECONNRESET), which a slow machine hits when many connections idle alike.
CLIENT_KEEPALIVE_EXPIRY_S = Settings.model_fields["http_keep_alive_timeout"].default * 0.4


def client_limits(max_connections: int | None = 100) -> httpx.Limits:
    """The connection pool of a test client to a real server: idle connections retired before the server
    closes them."""
    return httpx.Limits(max_connections=max_connections, keepalive_expiry=CLIENT_KEEPALIVE_EXPIRY_S)


def free_port() -> int:
    """Returns a TCP port free on loopback right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class ServerProcess:
    """`python3 -m dotfight.cli serve` on loopback against `database_url`; its output goes to `log_path`.

    `extra_args` are added to the command line (e.g. `--no-access-log`), `extra_env` to the environment
    (e.g. raised flood limits). The port is chosen once, so a restart after `kill` serves the same URL.
    """

    def __init__(
        self,
        database_url: str,
        log_path: Path,
        *,
        extra_args: Sequence[str] = (),
        extra_env: Mapping[str, str] | None = None,
        start_timeout_s: float = 30.0,
        http_timeout_s: float = 10.0,
        memory_limit_bytes: int | None = None,
        cwd: Path = REPO_ROOT,
    ) -> None:
        self.database_url = database_url
        self.log_path = log_path
        self.extra_args = list(extra_args)
        self.extra_env = dict(extra_env or {})
        self.start_timeout_s = start_timeout_s
        # A cap on the process's address space (RLIMIT_AS), so a regression in a hostile test fails
        # the test with a MemoryError instead of taking the machine down.
        self.memory_limit_bytes = memory_limit_bytes
        # `-m` puts the working directory first on the path: the package found there is the one run.
        self.cwd = cwd
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        # One client for all requests: a fresh httpx client per request costs ~20 ms of set-up.
        self.http = httpx.Client(base_url=self.base_url, timeout=http_timeout_s, limits=client_limits())

    @classmethod
    def on_sqlite(
        cls,
        workdir: Path,
        *,
        extra_args: Sequence[str] = (),
        extra_env: Mapping[str, str] | None = None,
        memory_limit_bytes: int | None = None,
    ) -> ServerProcess:
        """A server on a fresh SQLite file in `workdir`, logging to `workdir/server.log`."""
        return cls(
            f"sqlite:///{workdir / 'pages.sqlite3'}",
            workdir / "server.log",
            extra_args=extra_args,
            extra_env=extra_env,
            memory_limit_bytes=memory_limit_bytes,
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, page_id: str) -> str:
        """The WebSocket URL of one page."""
        return f"ws://127.0.0.1:{self.port}/api/pages/{page_id}/ws"

    def launch(self) -> None:
        """Starts the process without waiting for it (so that several can start at once)."""
        env = {**os.environ, **self.extra_env}
        command = [
            sys.executable, "-m", "dotfight.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
            "--database-url", self.database_url, *self.extra_args,
        ]  # fmt: skip
        limit = self.memory_limit_bytes

        def cap_memory() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                cwd=self.cwd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=cap_memory if limit is not None else None,
            )

    def wait_healthy(self) -> None:
        """Waits until /api/health answers 200; raises with the log's tail if the process exits first."""
        assert self.process is not None, "launch() first"
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_text()[-3000:]}")
            try:
                if self.http.get("/api/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"the server did not become healthy within {self.start_timeout_s:.0f} s")

    def another(self) -> ServerProcess:
        """A second server on the same database, log, environment and memory cap (on a port of its
        own), started and healthy: the process a hostile test restarts on a page it stored itself."""
        server = ServerProcess(
            self.database_url,
            self.log_path,
            extra_env=self.extra_env,
            memory_limit_bytes=self.memory_limit_bytes,
        )
        server.start()
        return server

    def start(self) -> None:
        """Starts the process and waits until it is healthy."""
        self.launch()
        self.wait_healthy()

    def kill(self) -> None:
        """Kills the server with SIGKILL (no chance to clean up)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """Terminates the server (SIGKILL if it lingers) and closes the client."""
        self.http.close()
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def rss_bytes(self) -> int:
        """The process's resident memory now (VmRSS), in bytes."""
        assert self.process is not None
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS line")

    def descendants(self) -> set[int]:
        """The process ids of the server's children, their children and so on, now (Linux /proc)."""
        assert self.process is not None
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    # The field after the command's closing parenthesis: state, then the parent's id.
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue  # the process ended meanwhile
                parents[int(entry.name)] = int(fields[1])
        found: set[int] = set()
        frontier = {self.process.pid}
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
            found |= frontier
        return found

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


def quiet_servers(workdir: Path, trees: Mapping[str, Path]) -> dict[str, ServerProcess]:
    """One server per source tree (`dotfight serve` run from it), each on a fresh SQLite file in
    `workdir`, without access log and warnings only: the benchmarks that time trees side by side."""
    return {
        name: ServerProcess(
            f"sqlite:///{workdir / f'server{i}.sqlite3'}",
            workdir / f"server{i}.log",
            extra_args=["--no-access-log", "--log-level", "warning"],
            cwd=tree,
        )
        for i, (name, tree) in enumerate(trees.items())
    }
