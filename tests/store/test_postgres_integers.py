"""Issue 18, item 6 on PostgreSQL, whose `Integer` columns hold 32 bits: `from=2147483648` was a 500 there.
Every integer a client sends past 2³¹ − 1 is 400 `bad_request`, and the largest one it stores is served."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from dotfight.server.app import create_app
from tests.store.test_postgres import make_settings

EDGE = 2**31 - 1


def test_log_paging_and_versions_past_32_bits_are_refused_on_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>Dotfight</title>")
    with TestClient(create_app(make_settings(postgres_url, web))) as client:
        created = client.post("/api/pages", json={"preset": "quick", "mode": "local"}).json()
        url = f"/api/pages/{created['id']}/log"
        for params in ({"from": EDGE + 1}, {"limit": EDGE + 1}, {"from": 2**63}):
            answer = client.get(url, params=params)
            assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_request", answer.text
        edge = client.get(url, params={"from": EDGE, "limit": EDGE})
        assert edge.status_code == 200 and edge.json()["entries"] == [], edge.text
        auth = {"Authorization": f"Bearer {created['seats']['blue']}"}
        body = {"action": {"type": "quick_setup"}, "version": EDGE + 1}
        answer = client.post(f"/api/pages/{created['id']}/actions", json=body, headers=auth)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_request", answer.text
