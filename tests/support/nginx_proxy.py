"""A real nginx in front of `dotfight serve` processes on loopback, configured from deploy/nginx.conf.

The recipe's own directives are kept — its page-id map, both upstreams, its limits, headers and
locations — and only what ties it to a production host is replaced: the TLS server becomes one plain
HTTP listener on a loopback port, the upstream servers are the given processes (with the recipe's
`max_fails`/`fail_timeout`), and every path nginx writes (pid, logs, temporary files) is under a prefix
of its own. So the tests and `benchmarks/server.py --proxy nginx` run exactly the recipe's routing.

>>> statements("a 1; b { c 2; } # d { }\\n")
['a 1;', 'b { c 2; }']
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
from fastapi import APIRouter
from fastapi.routing import APIRoute

from dotfight.server import routes
from dotfight.server.routes.ws import PAGE_SOCKET_PATH
from tests.support.server_process import REPO_ROOT, client_limits, free_port

RECIPE = REPO_ROOT / "deploy" / "nginx.conf"
# The response header naming the instance that answered: added by the tests' config only.
UPSTREAM_HEADER = "X-Dotfight-Upstream"
# When the tests run as root nginx runs as this account (the master too: nothing here needs root).
UNPRIVILEGED_ACCOUNT = "nobody"
START_TIMEOUT_S = 20.0
# Directives of the recipe's TLS server that belong to a production host, not to the routing.
HOST_ONLY = re.compile(r"^(listen|server_name|http2|ssl_\w+)\b")
# Per-address limits a benchmark from one address lifts (as it lifts the app's own).
PER_ADDRESS_LIMITS = re.compile(r"^(limit_conn|limit_req)\b")


def find_nginx() -> Path | None:
    """Returns nginx's program (Debian installs it in /usr/sbin, often off a user's PATH), or None."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    return Path(found) if found else None


def _tokens(text: str) -> Iterator[str]:
    """Yields the text's characters outside comments, each quoted string as one token."""
    index = 0
    while index < len(text):
        character = text[index]
        if character == "#":
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
            continue
        if character in "\"'":
            end = text.index(character, index + 1)
            yield text[index : end + 1]
            index = end + 1
            continue
        yield character
        index += 1


def statements(text: str) -> list[str]:
    """Splits nginx configuration text into its top-level statements (`name args;` or `name args {…}`),
    comments dropped, each as one string."""
    found: list[str] = []
    current: list[str] = []
    depth = 0
    for token in _tokens(text):
        current.append(token)
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                found.append(" ".join("".join(current).split()))
                current = []
        elif token == ";" and depth == 0:
            found.append(" ".join("".join(current).split()))
            current = []
    if "".join(current).strip():
        raise ValueError(f"unterminated statement: {''.join(current).strip()[:80]}")
    return found


def block_body(statement: str) -> str:
    """Returns the text between a block statement's outer braces."""
    return statement[statement.index("{") + 1 : statement.rindex("}")]


def _with_servers(upstream: str, addresses: Sequence[str]) -> str:
    """The upstream block with its server lines replaced by one per address (the recipe's parameters)."""
    inner = statements(block_body(upstream))
    recipe_servers = [line for line in inner if line.startswith("server ")]
    if not recipe_servers:
        raise ValueError(f"an upstream without servers: {upstream[:80]}")
    parameters = recipe_servers[0].removesuffix(";").split()[2:]
    servers = [" ".join(["server", address, *parameters]) + ";" for address in addresses]
    rest = [line for line in inner if not line.startswith("server ")]
    # The balancing method (least_conn, hash) stays first and keepalive after it, as nginx asks.
    method = [line for line in rest if not line.startswith("keepalive")]
    keepalive = [line for line in rest if line.startswith("keepalive")]
    head = upstream[: upstream.index("{")]
    return head + "{ " + " ".join([*method, *servers, *keepalive]) + " }"


def local_config(
    addresses: Sequence[str],
    port: int,
    prefix: Path,
    *,
    tag_upstream: bool = False,
    lift_per_address_limits: bool = False,
    recipe: str | None = None,
) -> str:
    """Renders a whole nginx.conf from the recipe: a plain listener on 127.0.0.1:`port` in front of
    `addresses` ("127.0.0.1:8000"), its files under `prefix`. `tag_upstream` adds the response header
    naming the instance that answered; `lift_per_address_limits` drops `limit_conn`/`limit_req`."""
    parts = statements(RECIPE.read_text() if recipe is None else recipe)
    http_level: list[str] = []
    server_body: list[str] = []
    for statement in parts:
        if statement.startswith("upstream "):
            http_level.append(_with_servers(statement, addresses))
        elif statement.startswith("server "):
            inner = statements(block_body(statement))
            if any(re.match(r"listen \S*443\b", line) for line in inner):
                server_body = [line for line in inner if not HOST_ONLY.match(line)]
        else:
            http_level.append(statement)
    if not server_body:
        raise ValueError("the recipe has no TLS server block to take the locations from")
    if lift_per_address_limits:
        server_body = [line for line in server_body if not PER_ADDRESS_LIMITS.match(line)]
        server_body = [re.sub(r"\s*limit_req [^;]*;", "", line) for line in server_body]
    if tag_upstream:
        server_body.append(f"add_header {UPSTREAM_HEADER} $upstream_addr always;")
    temp = {name: prefix / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    lines = [
        "daemon off;",
        "worker_processes 1;",
        "worker_rlimit_nofile 16384;",
        f"pid {prefix / 'nginx.pid'};",
        f"error_log {prefix / 'error.log'} warn;",
        "events { worker_connections 8192; }",
        "http {",
        f"    access_log {prefix / 'access.log'};",
        *(f"    {name}_temp_path {path};" for name, path in temp.items()),
        *(f"    {statement}" for statement in http_level),
        "    server {",
        f"        listen 127.0.0.1:{port};",
        *(f"        {line}" for line in server_body),
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def page_paths(page_id: str) -> list[tuple[str, str]]:
    """(method, path) of every route of the server that names a page, for `page_id`: the routes of
    every router in `dotfight.server.routes` (a new one is found too), and the page socket."""
    found: list[tuple[str, str]] = []
    for module_info in pkgutil.iter_modules(routes.__path__):
        router = getattr(importlib.import_module(f"{routes.__name__}.{module_info.name}"), "router", None)
        if not isinstance(router, APIRouter):
            continue
        for route in router.routes:
            if isinstance(route, APIRoute) and "{page_id}" in route.path:
                path = route.path.replace("{page_id}", page_id)
                found += [(method, path) for method in sorted((route.methods or set()) - {"HEAD"})]
    socket_path = PAGE_SOCKET_PATH.pattern.replace("([^/]+)", page_id)
    return [*found, ("GET", socket_path)]


class NginxProxy:
    """nginx, run unprivileged in the foreground, in front of the given instances; `base_url` is its
    loopback listener."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        tag_upstream: bool = False,
        lift_per_address_limits: bool = False,
    ) -> None:
        program = find_nginx()
        if program is None:
            raise FileNotFoundError("nginx is not installed (apt-get install nginx-light)")
        self.program = program
        self.port = free_port()
        self.prefix = Path(tempfile.mkdtemp(prefix="dotfight-nginx-"))
        self.config_path = self.prefix / "nginx.conf"
        self.config_path.write_text(
            local_config(
                addresses,
                self.port,
                self.prefix,
                tag_upstream=tag_upstream,
                lift_per_address_limits=lift_per_address_limits,
            )
        )
        self._account = pwd.getpwnam(UNPRIVILEGED_ACCOUNT) if os.geteuid() == 0 else None
        if self._account is not None:
            os.chown(self.prefix, self._account.pw_uid, self._account.pw_gid)
            os.chown(self.config_path, self._account.pw_uid, self._account.pw_gid)
        self.process: subprocess.Popen[bytes] | None = None
        # The same shape as ServerProcess's client, so the page helpers of tests/support take either.
        self.http = httpx.Client(base_url=self.base_url, timeout=10.0, limits=client_limits())

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, page_id: str) -> str:
        """A page's WebSocket URL through the proxy."""
        return f"ws://127.0.0.1:{self.port}/api/pages/{page_id}/ws"

    def command(self, *extra: str) -> list[str]:
        """nginx's command line on this prefix and config (as the unprivileged account under root)."""
        command = [str(self.program), "-p", str(self.prefix), "-c", str(self.config_path)]
        command += ["-e", str(self.prefix / "error.log"), *extra]
        if self._account is not None:
            command = ["runuser", "-u", self._account.pw_name, "--", *command]
        return command

    def check(self) -> None:
        """Runs `nginx -t` on the config; raises with nginx's words when it refuses it."""
        answer = subprocess.run(self.command("-t"), capture_output=True, text=True, timeout=30)
        if answer.returncode != 0:
            raise RuntimeError(f"nginx -t refused the config: {answer.stderr.strip()}")

    def start(self) -> None:
        """Starts nginx and waits until its listener answers (any status: the instances may be down)."""
        self.check()
        with (self.prefix / "stdout.log").open("ab") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.error_log()[-2000:]}")
            try:
                httpx.get(f"{self.base_url}/api/health", timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError(f"nginx did not listen within {START_TIMEOUT_S:.0f} s")

    def pids(self) -> list[int]:
        """The master's and its workers' process ids (for counting nginx's CPU)."""
        pid_file = self.prefix / "nginx.pid"
        if not pid_file.exists():
            return []
        master = int(pid_file.read_text().split()[0])
        children = Path(f"/proc/{master}/task/{master}/children")
        workers = [int(pid) for pid in children.read_text().split()] if children.exists() else []
        return [master, *workers]

    def error_log(self) -> str:
        try:
            return (self.prefix / "error.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Stops nginx (a quick shutdown, then SIGKILL to its master and workers if it lingers) and
        removes its prefix."""
        self.http.close()
        try:
            process = self.process
            # Under runuser nginx's master is runuser's child: it is signalled by its own pid.
            for signal_number in (signal.SIGTERM, signal.SIGKILL):
                if process is None or process.poll() is not None:
                    break
                pids = self.pids() if signal_number == signal.SIGKILL else self.pids()[:1]
                for pid in pids or [process.pid]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal_number)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(10)
        finally:
            shutil.rmtree(self.prefix, ignore_errors=True)
