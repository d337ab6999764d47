"""`dotfight lab` end to end: the table, the JSON report and the picture, and clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotfight.cli import main

SMALL = ["--preset", "custom", "--set", "bases_per_side=2", "--set", "soldiers_per_base=3"]


def test_the_lab_writes_its_report_and_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, picture = tmp_path / "out.json", tmp_path / "out.png"
    status = main(
        [
            "lab",
            *SMALL,
            "--games",
            "4",
            "--seed",
            "7",
            "--workers",
            "2",
            "--bot",
            "easy",
            "--bot-red",
            "normal",
            "--set",
            "wall_loss_full=0.7",
            "--json",
            str(out),
            "--plot",
            str(picture),
        ]
    )
    assert status == 0
    report = json.loads(out.read_text())
    assert report["pages"] == 4
    assert report["rules"]["wall_loss_full"] == 0.7
    assert report["config"]["bots"] == {"blue": "easy", "red": "normal"}
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr()
    assert "turns a page" in printed.out
    assert "pages in" in printed.err  # the progress and timing go to stderr


def test_the_json_is_the_same_whatever_the_worker_count(tmp_path: Path) -> None:
    reports = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.json"
        assert (
            main(
                [
                    "lab",
                    *SMALL,
                    "--games",
                    "4",
                    "--seed",
                    "2",
                    "--workers",
                    workers,
                    "--quiet",
                    "--json",
                    str(out),
                ]
            )
            == 0
        )
        reports.append(out.read_text())
    assert reports[0] == reports[1]


@pytest.mark.parametrize("bad", [["--set", "wall_loss_full=2"], ["--set", "no_such_rule=1"]])
def test_bad_rule_overrides_are_refused_with_a_code(
    bad: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.json"
    assert main(["lab", *SMALL, "--games", "2", *bad, "--json", str(out)]) == 2
    assert "bad_request" in capsys.readouterr().err
    assert not out.exists()


def test_a_set_without_a_value_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        main(["lab", "--set", "wall_loss_full"])
