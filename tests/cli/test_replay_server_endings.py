"""`dotfight replay` verifies a page that ended on time or by absence: the log the server keeps, with
its last entry a `time_out` (or `abandon`) acting as the late (or absent) side, written through the store
as the server writes it, replays exactly and its seed checks; a log whose ending names the wrong side
does not."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dotfight.cli import main
from dotfight.engine import RuleSet, State, apply, new_page
from dotfight.server import fair_dice
from dotfight.store.database import make_engine
from dotfight.store.migrations import upgrade_to_head
from dotfight.store.records import Checkpoint, LogEntry, PageRecord
from dotfight.store.sql_pages import SqlPageStore
from dotfight.store.views import LogSlice
from tests.support.players import nearest_snipe_action

SEED = 20261201


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlPageStore]:
    engine = make_engine(f"sqlite:///{tmp_path / 'pages.sqlite3'}")
    upgrade_to_head(engine)
    sql = SqlPageStore(engine)
    yield sql
    sql.close()
    engine.dispose()


def checkpoint(state: State) -> Checkpoint:
    status = "over" if state.phase == "over" else "open"
    return Checkpoint(state.version, state.phase, state.actor, state.winner, status)


def stored_log(store: SqlPageStore, ending: str, plays: int) -> dict[str, Any]:
    """Plays `plays` actions, then the server's `ending` for the side to act, through the store; returns
    the log as `GET /api/pages/{id}/log` answers it."""
    state = new_page(RuleSet.preset("quick"), SEED)
    record = PageRecord(
        "ended", "live", "quick", state.rules.to_json(), fair_dice.seed_hex(SEED),
        fair_dice.seed_commitment(SEED), None, datetime.now(UTC), clock={"initial_s": 60, "increment_s": 0},
    )  # fmt: skip
    first = Checkpoint(0, state.phase, state.actor, None, "open", state=state.to_json())
    store.create(record, first, []).result(10)
    for number in range(plays + 1):
        side = state.actor
        assert side is not None
        action = {"type": ending} if number == plays else nearest_snipe_action(state.snapshot())
        after, events = apply(state, side, action)
        entry = LogEntry(
            after.version, side, action, events, move_id=None if number == plays else f"m{number}"
        )
        store.append("ended", state.version, entry, checkpoint(after)).result(10)
        state = after
    assert state.end_reason == ("time" if ending == "time_out" else "abandoned")
    head = {"id": "ended", "mode": "live", "preset": "quick", "rules": record.rules}
    head |= {"seed_sha256": record.seed_sha256, "seed": record.seed}
    text = asyncio.run(store.views.log(head, state.version, LogSlice(1, 1000)))
    log: dict[str, Any] = json.loads(text)
    return log


def replay(tmp_path: Path, log: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    status = main(["replay", str(path), "--show", "snapshot"])
    return status, capsys.readouterr().out


@pytest.mark.parametrize(("ending", "reason"), [("time_out", "time"), ("abandon", "abandoned")])
def test_a_page_ended_by_the_server_replays_and_checks(
    tmp_path: Path, store: SqlPageStore, capsys: pytest.CaptureFixture[str], ending: str, reason: str
) -> None:
    log = stored_log(store, ending, plays=6)
    last = log["entries"][-1]
    assert last["action"] == {"type": ending} and last["events"][0]["reason"] == reason
    status, out = replay(tmp_path, log, capsys)
    assert status == 0, out
    final = json.loads(out)
    assert (final["phase"], final["end_reason"], final["winner"]) == (
        "over",
        reason,
        last["events"][0]["winner"],
    )


def test_an_ending_that_names_the_wrong_side_is_found(
    tmp_path: Path, store: SqlPageStore, capsys: pytest.CaptureFixture[str]
) -> None:
    log = stored_log(store, "time_out", plays=4)
    last = log["entries"][-1]
    last["side"] = "red" if last["side"] == "blue" else "blue"  # the late side's opponent, not the late side
    status, _ = replay(tmp_path, log, capsys)
    assert status == 1
