"""A database written by an older Dotfight (tests/fixtures/old_main, made at commit 3a6ed21) opens in
place with today's server: migrations run on start, every page reads as it was, replays byte for byte,
and plays on under the rules it was created with — whatever defaults the presets have since."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect, text

from dotfight.engine import Replay, RuleSet
from dotfight.server.app import create_app
from dotfight.server.settings import Settings
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "old_main"
EXPECTED: dict[str, Any] = json.loads((FIXTURE / "expected.json").read_text())
PAGES = {page["name"]: page for page in EXPECTED["pages"]}


def contains(new: Any, old: Any, where: str = "") -> None:
    """Asserts that `new` holds everything `old` held, equal (PROTOCOL.md: fields may be added)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for key, value in old.items():
            assert key in new, f"{where}.{key} is gone"
            contains(new[key], value, f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), f"{where}: {len(new)} items, was {len(old)}"
        for index, (a, b) in enumerate(zip(new, old, strict=True)):
            contains(a, b, f"{where}[{index}]")
    else:
        assert new == old, f"{where}: {new!r}, was {old!r}"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    shutil.copy(FIXTURE / "pages.sqlite3", tmp_path / "pages.sqlite3")
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>Dotfight</title>")
    values: dict[str, Any] = {
        "database_url": f"sqlite:///{tmp_path / 'pages.sqlite3'}",
        "web_dir": web,
        "http_requests_per_second": 10_000.0,
        "http_request_burst": 10_000,
    }
    # The fixture's unplayed pages were made on 2026-11-30: they must not expire under this test.
    if "page_setup_ttl_days" in Settings.model_fields:
        values["page_setup_ttl_days"] = 1_000_000
    with TestClient(create_app(Settings(**values))) as test_client:
        yield test_client


def whole_log(client: TestClient, page_id: str) -> dict[str, Any]:
    """The page's log, following the `next` cursor when the server pages it."""
    answer = client.get(f"/api/pages/{page_id}/log")
    assert answer.status_code == 200, answer.text
    log: dict[str, Any] = answer.json()
    entries = list(log["entries"])
    for _ in range(10_000):
        if log.get("next") is None:
            break
        log = client.get(f"/api/pages/{page_id}/log", params={"from": log["next"]}).json()
        entries.extend(log["entries"])
    log["entries"] = entries
    log.pop("next", None)
    return log


@pytest.mark.parametrize("name", sorted(PAGES))
def test_an_old_page_reads_as_it_was(client: TestClient, name: str) -> None:
    page = PAGES[name]
    snapshot = client.get(f"/api/pages/{page['id']}").json()
    contains(snapshot, page["snapshot"], "snapshot")
    log = whole_log(client, page["id"])
    old_log = dict(page["log"])
    old_log.pop("next", None)
    contains(log, old_log, "log")


def test_an_old_finished_page_replays_byte_for_byte(client: TestClient) -> None:
    page = PAGES["classic_finished"]
    log = whole_log(client, page["id"])
    assert log["seed"] is not None
    replay = Replay(
        RuleSet.from_json(log["rules"]),
        int(log["seed"], 16),
        [{"side": entry["side"], "action": entry["action"]} for entry in log["entries"]],
    )
    assert replay.error is None
    assert replay.valid == len(log["entries"])
    recorded = [entry["events"] for entry in page["log"]["entries"]]
    assert json.dumps(replay.events, sort_keys=True) == json.dumps(recorded, sort_keys=True)


@pytest.mark.parametrize("name", sorted(name for name, page in PAGES.items() if page["next"]))
def test_an_old_page_plays_on_under_its_own_rules(client: TestClient, name: str) -> None:
    """The next flick draws wildness and shake: under the page's stored rules it lands exactly where the
    older engine put it, even if the presets' numbers have been calibrated since."""
    page = PAGES[name]
    move = page["next"]
    token = page["seats"][move["side"]]
    answer = client.post(
        f"/api/pages/{page['id']}/actions",
        json={"action": move["action"], "version": page["snapshot"]["version"], "move_id": "after-upgrade"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 200, answer.text
    contains(answer.json()["events"], move["events"], "events")


def test_an_old_database_keeps_its_cached_states_out_of_the_page_rows(tmp_path: Path) -> None:
    """Migration 0006: each page's cached private state moves to `page_states` (the page row, updated by
    every action, no longer carries it), and the page loads from it without replaying its whole log."""
    shutil.copy(FIXTURE / "pages.sqlite3", tmp_path / "old.sqlite3")
    with closing(sqlite3.connect(tmp_path / "old.sqlite3")) as old:
        cached = dict(old.execute("SELECT id, cache_version FROM pages WHERE state_cache IS NOT NULL"))
        states = dict(old.execute("SELECT id, state_cache FROM pages WHERE state_cache IS NOT NULL"))
    assert cached, "the fixture's pages carry cached states"
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    try:
        upgrade_to_head(engine)
        columns = {column["name"] for column in inspect(engine).get_columns("pages")}
        assert not columns & {"state_cache", "cache_version"}
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT page_id, version, state FROM page_states")).all()
    finally:
        engine.dispose()
    assert {page_id: version for page_id, version, _ in rows} == cached
    assert all(json.loads(state) == json.loads(states[page_id]) for page_id, _, state in rows)
