"""The hostile harness itself: its servers really are memory-capped and answer on loopback."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.conftest import HOSTILE_MEMORY_CAP, StartServer


def test_hostile_server_is_memory_capped_and_on_loopback(start_server: StartServer) -> None:
    server = start_server()
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.http.get("/api/health").status_code == 200
    assert server.process is not None
    limits = Path(f"/proc/{server.process.pid}/limits").read_text()
    line = next(row for row in limits.splitlines() if row.startswith("Max address space"))
    assert str(HOSTILE_MEMORY_CAP) in line.split()
    assert 0 < server.rss_bytes() < HOSTILE_MEMORY_CAP
