"""Transport limits against a real `dotfight serve`: request heads are bounded in size and time (under
httptools, uvicorn's default, and under h11), idle kept-alive connections end, and connections are capped.
Raw sockets, because an HTTP client library would refuse to send what these tests send."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

import pytest

from dotfight.server.settings import Settings
from tests.hostile.conftest import StartServer

# httptools is what `dotfight serve` runs by default (uvicorn[standard]); h11 is chosen with --http h11.
IMPLEMENTATION_ARGS = {"httptools": [], "h11": ["--http", "h11"]}
HEAD = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.settimeout(10)
    return sock


def read_answer(sock: socket.socket, deadline_s: float = 10.0, *, until: float | None = None) -> bytes:
    """Reads until the server closes the connection or the deadline (`until`, a monotonic time, else
    `deadline_s` from now); returns what came."""
    chunks: list[bytes] = []
    deadline = until if until is not None else time.monotonic() + deadline_s
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            break
        except TimeoutError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def status_and_body(answer: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def send_all(sock: socket.socket, data: bytes) -> None:
    """Sends as much of `data` as the server takes (it may close the connection half-way)."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        sock.sendall(data)


@pytest.mark.parametrize("implementation", ["httptools", "h11"])
def test_huge_request_head_is_refused_with_431_and_memory_stays_flat(
    start_server: StartServer, implementation: str
) -> None:
    server = start_server(extra_args=IMPLEMENTATION_ARGS[implementation])
    before = server.rss_bytes()
    for _ in range(3):
        with connect(server.port) as sock:
            # 8 MiB of one header: today's httptools server read all of it (64 MiB was accepted).
            send_all(sock, HEAD + b"X-Big: " + b"a" * (8 * 1024 * 1024) + b"\r\n\r\n")
            answer = read_answer(sock)
        status, body = status_and_body(answer)
        if implementation == "h11":  # h11 bounds the head itself; the answer still has the API's shape
            assert status in (400, 431)
        else:
            assert status == 431
            assert body["error"] == {
                "code": "header_too_large",
                "message": "the request's headers are too large",
            }
    assert server.rss_bytes() - before < 50 * 1024**2
    # Many small headers add up the same way.
    with connect(server.port) as sock:
        send_all(sock, HEAD + b"".join(b"X-H%d: %s\r\n" % (i, b"b" * 100) for i in range(400)) + b"\r\n")
        status, _ = status_and_body(read_answer(sock))
    assert status in (400, 431)
    assert server.http.get("/api/health").status_code == 200


def test_a_head_just_under_the_limit_with_its_body_in_the_same_packet_is_served(
    start_server: StartServer,
) -> None:
    server = start_server()
    body = json.dumps({"mode": "local"}).encode()
    padding = b"X-Pad: " + b"p" * 15000 + b"\r\n"
    request = (
        b"POST /api/pages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + padding
        + b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )
    with connect(server.port) as sock:
        sock.sendall(request)
        status, created = status_and_body(read_answer(sock))
    assert status == 201
    assert created["id"]


@pytest.mark.parametrize("implementation", ["httptools", "h11"])
def test_half_sent_and_silent_connections_are_closed_after_the_head_timeout(
    start_server: StartServer, implementation: str
) -> None:
    server = start_server(
        extra_env={"DOTFIGHT_HTTP_HEAD_TIMEOUT": "1", "DOTFIGHT_MAX_CONNECTIONS": "1000"},
        extra_args=IMPLEMENTATION_ARGS[implementation],
    )
    half_sent = [connect(server.port) for _ in range(100)]
    silent = [connect(server.port) for _ in range(50)]
    for sock in half_sent:
        sock.sendall(HEAD)  # the blank line that ends the head never comes
    started = time.monotonic()
    until = started + 8
    answers = [read_answer(sock, until=until) for sock in half_sent]
    quiet = [read_answer(sock, until=until) for sock in silent]
    elapsed = time.monotonic() - started
    for sock in half_sent + silent:
        sock.close()
    assert elapsed < 8, "connections were held past the head timeout"
    for answer in answers:
        status, body = status_and_body(answer)
        assert status == 408
        assert body["error"]["code"] == "request_timeout"  # type: ignore[index]
    assert quiet == [b""] * len(silent)  # nothing was said to connections that said nothing
    assert server.http.get("/api/health").status_code == 200


def test_an_idle_kept_alive_connection_is_closed_after_the_keep_alive_timeout(
    start_server: StartServer,
) -> None:
    server = start_server(extra_env={"DOTFIGHT_HTTP_KEEP_ALIVE_TIMEOUT": "1"})
    with connect(server.port) as sock:
        sock.sendall(HEAD + b"\r\n")
        first = b""
        while not first.endswith(b"}"):  # the whole health answer (head, then its small JSON body)
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        assert read_answer(sock, deadline_s=6) == b""
        assert time.monotonic() - started < 4


def test_requests_over_the_connection_cap_get_503_in_the_api_shape(start_server: StartServer) -> None:
    server = start_server(extra_env={"DOTFIGHT_MAX_CONNECTIONS": "20"})
    held = [connect(server.port) for _ in range(25)]
    try:
        time.sleep(0.3)
        with connect(server.port) as sock:
            sock.sendall(HEAD + b"Connection: close\r\n\r\n")
            status, body = status_and_body(read_answer(sock))
        assert status == 503
        assert body["error"]["code"] == "unavailable"  # type: ignore[index]
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)
    assert server.http.get("/api/health").status_code == 200


def test_the_deploy_recipe_repeats_the_apps_limits() -> None:
    """deploy/nginx.conf (no nginx on the test machine) says the same numbers as the app's defaults."""
    conf = (Path(__file__).resolve().parents[2] / "deploy" / "nginx.conf").read_text()
    defaults = Settings()
    assert f"client_max_body_size {defaults.max_body_bytes // 1024}k;" in conf
    assert f"client_header_timeout {defaults.http_head_timeout:g}s;" in conf
    assert f"client_body_timeout {defaults.http_body_timeout:g}s;" in conf
    assert f"keepalive_timeout {defaults.http_keep_alive_timeout}s;" in conf
    assert "large_client_header_buffers 2 8k;" in conf and defaults.http_max_head_bytes == 2 * 8 * 1024
    per_address = min(defaults.ws_max_sockets_per_address, defaults.http_max_connections_per_peer)
    assert f"limit_conn dotfight_conn {per_address};" in conf
    assert f"rate={defaults.page_creations_per_minute:g}r/m" in conf
    assert f"burst={defaults.page_creation_burst} nodelay" in conf
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in conf  # overwritten, never appended
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
