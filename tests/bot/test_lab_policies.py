"""Head-to-heads by policy: `--red-policy snipe-only` reaches the red bot; the report names the players."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dotfight.lab.page as page
from dotfight.cli import main
from dotfight.lab import LabConfig, build_report, run_pages
from dotfight.lab.config import make_bot

SMALL = {"bases_per_side": 2, "soldiers_per_base": 3}
SMALL_ARGS = ["--preset", "custom", "--set", "bases_per_side=2", "--set", "soldiers_per_base=3"]


def test_each_side_gets_its_policy_and_the_colours_alternate(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[str, str]] = []

    def recording_bot(strength: str, seed: int, policy: str) -> Any:
        made.append((strength, policy))
        return make_bot(strength, seed, "full")

    monkeypatch.setattr(page, "make_bot", recording_bot)
    config = LabConfig(
        preset="custom",
        overrides=dict(SMALL),
        games=2,
        seed=1,
        bot_blue="normal",
        policy_red="snipe-only",
        alternate=True,
    )
    records = run_pages(config, workers=1)
    # page 0: blue normal (full), red normal snipe-only; page 1: the colours swapped
    assert made == [
        ("normal", "full"),
        ("normal", "snipe-only"),
        ("normal", "snipe-only"),
        ("normal", "full"),
    ]
    assert [(r.blue, r.red) for r in records] == [
        ("normal", "normal+snipe-only"),
        ("normal+snipe-only", "normal"),
    ]
    duel = build_report(config, records)["head_to_head"]
    assert (duel["a"], duel["b"]) == ("normal", "normal+snipe-only")


def test_unknown_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="policy"):
        LabConfig(policy_blue="berserk")
    with pytest.raises(SystemExit):
        main(["lab", "--red-policy", "berserk"])


def test_the_command_line_reports_the_head_to_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(page, "make_bot", lambda strength, seed, policy: make_bot(strength, seed, "full"))
    out = tmp_path / "duel.json"
    args = ["lab", *SMALL_ARGS, "--games", "4", "--bot", "easy", "--bot-red", "easy", "--red-policy"]
    assert main([*args, "no-outside", "--alternate", "--workers", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["config"]["policies"] == {"blue": "full", "red": "no-outside"}
    duel = report["head_to_head"]
    assert (duel["a"], duel["b"]) == ("easy", "easy+no-outside")
    assert duel["wins"]["a"] + duel["wins"]["b"] == duel["decided"]
    printed = capsys.readouterr().out
    assert "head to head" in printed and "easy+no-outside" in printed
