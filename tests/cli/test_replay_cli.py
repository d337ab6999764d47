"""`dotfight replay`: a finished page's log is rebuilt and every roll checked against its commitment."""

from __future__ import annotations

import copy
import doctest
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import dotfight.replay_cli
from dotfight.cli import main
from dotfight.engine.rules import legacy_values

GOLDEN = Path(__file__).resolve().parents[1] / "engine" / "golden" / "quick.json"


def server_log(golden: dict[str, Any]) -> dict[str, Any]:
    """Returns the golden page in the shape of the server's `GET /api/pages/{id}/log` once it is over."""
    seed = golden["seed"]
    return {
        "id": "golden",
        "mode": "local",
        "preset": "quick",
        "rules": golden["rules"],
        "seed": seed,
        "seed_sha256": hashlib.sha256(seed.encode("ascii")).hexdigest(),
        "entries": [
            {"version": number, "side": entry["side"], "action": entry["action"], "events": events}
            for number, (entry, events) in enumerate(zip(golden["actions"], golden["events"], strict=True), 1)
        ],
    }


@pytest.fixture
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text())
    return data


def replay(
    tmp_path: Path, log: dict[str, Any], capsys: pytest.CaptureFixture[str], show: str = "none"
) -> tuple[int, str, str]:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    status = main(["replay", str(path), "--show", show])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_golden_log_replays_to_its_stored_final_snapshot(
    tmp_path: Path, golden: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = replay(tmp_path, golden, capsys, show="snapshot")
    assert status == 0, err
    final = {key: value for key, value in golden["final"].items() if key not in ("seed", "rng")}
    shown = json.loads(out)
    # Rule fields added after the golden page was made show their legacy values (engine C2).
    added = {key: value for key, value in shown["rules"].items() if key not in golden["rules"]}
    assert added == legacy_values(golden["rules"]["reach_curve"])
    shown["rules"] = {key: value for key, value in shown["rules"].items() if key in golden["rules"]}
    assert shown == final
    assert "every recorded event is reproduced" in err


def test_a_server_log_checks_the_seed_against_its_sha256_and_every_event(
    tmp_path: Path, golden: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = replay(tmp_path, server_log(golden), capsys)
    assert status == 0, err
    assert "the seed matches its SHA-256" in err
    assert f"{len(golden['actions'])} actions" in err


def test_a_seed_that_does_not_match_its_commitment_is_reported(
    tmp_path: Path, golden: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    log = server_log(golden)
    log["seed_sha256"] = hashlib.sha256(b"another seed").hexdigest()
    status, _, err = replay(tmp_path, log, capsys)
    assert status == 1
    assert "not the" in err and log["seed_sha256"] in err


def test_a_tampered_roll_is_found_at_its_action(
    tmp_path: Path, golden: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    log = server_log(golden)
    number = next(i for i, entry in enumerate(log["entries"]) if entry["action"]["type"] == "flick")
    tampered = copy.deepcopy(log)
    ink = tampered["entries"][number]["events"][0]
    assert ink["type"] == "ink"
    ink["points"][-1][0] += 0.5  # the line drawn half a unit away from where the dice put it
    status, _, err = replay(tmp_path, tampered, capsys)
    assert status == 1
    assert f"action {number + 1}: the recorded events differ" in err


def test_a_page_not_yet_over_has_no_seed_to_check(
    tmp_path: Path, golden: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    log = server_log(golden)
    log["seed"] = None
    status, _, err = replay(tmp_path, log, capsys)
    assert status == 2
    assert "reveals it once the page is over" in err


def test_a_refused_action_keeps_the_valid_prefix(
    tmp_path: Path, golden: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    log = copy.deepcopy(golden)
    del log["events"]
    log["actions"][3]["side"] = "purple"
    status, out, err = replay(tmp_path, log, capsys, show="events")
    assert status == 1
    assert [json.loads(line)["version"] for line in out.splitlines()] == [1, 2, 3]
    assert "action 4 refused (bad_request/" in err


def test_the_module_examples_run() -> None:
    failures, tried = doctest.testmod(dotfight.replay_cli)
    assert tried > 0 and failures == 0
