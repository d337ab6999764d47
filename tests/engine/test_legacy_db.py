"""Old pages (issue 8, item 2): a server database written by an older commit, whose stored rules lack the
calibration fields, replays byte for byte — also after the presets' defaults change.

The database is made by `tests/engine/make_legacy_db.py` with that commit's own server; it is read here
with plain sqlite3, as rows, the way the server reads them back (`RuleSet.from_json`, `State.from_json`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dotfight.engine import PRESETS, Replay, RuleSet, State
from dotfight.engine.rules import legacy_values

DATABASE = Path(__file__).parent / "golden" / "legacy.sqlite3"
CALIBRATED = {"wildness_soft": 0.03, "wildness_curve": 1.0, "shake_sigmas": 3.0}


def stored_pages() -> Iterator[dict[str, Any]]:
    connection = sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)
    try:
        pages = connection.execute("SELECT id, rules, seed, version, state_cache, cache_version FROM pages")
        for page_id, rules, seed, version, cache, cache_version in pages.fetchall():
            rows = connection.execute(
                "SELECT side, action, events FROM actions WHERE page_id = ? ORDER BY version", (page_id,)
            ).fetchall()
            yield {
                "id": page_id,
                "rules": json.loads(rules),
                "seed": seed,
                "version": version,
                "cache": json.loads(cache),
                "cache_version": cache_version,
                "actions": [{"side": side, "action": json.loads(action)} for side, action, _ in rows],
                "events": [json.loads(events) for _, _, events in rows],
            }
    finally:
        connection.close()


PAGES = list(stored_pages())


def without_added_rules(data: dict[str, Any], stored_rules: dict[str, Any]) -> dict[str, Any]:
    """The state JSON with the rule fields added since the row was written checked (legacy) and left out."""
    rules = data["rules"]
    assert {k: v for k, v in rules.items() if k not in stored_rules} == legacy_values(
        stored_rules["reach_curve"]
    )
    return {**data, "rules": {k: v for k, v in rules.items() if k in stored_rules}}


@pytest.fixture(params=["today's presets", "calibrated presets"])
def presets(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.param == "calibrated presets":
        for name, rules in list(PRESETS.items()):
            monkeypatch.setitem(PRESETS, name, rules.replace(**CALIBRATED))


def test_the_database_holds_old_rows() -> None:
    assert len(PAGES) == 4 and sum(len(page["actions"]) for page in PAGES) > 400
    for page in PAGES:
        assert not set(CALIBRATED) & set(page["rules"])
    assert {page["rules"]["reach_curve"] for page in PAGES} >= {1.5, 2.0, 2.5}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: f"{page['rules']['preset']}-{page['id']}")
def test_a_stored_page_replays_byte_for_byte(page: dict[str, Any], presets: None) -> None:
    replay = Replay(RuleSet.from_json(page["rules"]), int(page["seed"], 16), page["actions"])
    assert replay.error is None and replay.valid == page["version"]
    assert json.loads(json.dumps(replay.events)) == page["events"]
    at_cache = replay.states(page["cache_version"])
    assert without_added_rules(json.loads(json.dumps(at_cache.to_json())), page["rules"]) == page["cache"]
    assert State.from_json(page["cache"]) == at_cache
