"""`dotfight lab calibrate`: the target table, the search space, a planted optimum recovered, resuming an
interrupted study, the figures that pull against each other, and the command itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotfight.cli import main
from dotfight.lab.book import CALIBRATABLE, book_target
from dotfight.lab.calibrate import (
    CalibrationError,
    Figures,
    LabEvaluator,
    Space,
    Target,
    calibrate,
)
from tests.bot.test_lab_sweep import counting

PLANTED = {"wildness": 0.07, "wildness_curve": 2.5}
SPACE = Space.parse(["wildness=0.03:0.1", "wildness_curve=1.5:4.5"], [])
TOY = Target.from_json(
    {
        "quick": {
            "figures": {
                "turns": {"value": 22, "band": [17.6, 26.4]},
                "risk_ratio": {"value": 0.5, "band": [0.4, 0.6]},
            }
        }
    }
)
START = {"wildness": 0.06, "wildness_curve": 3.0}


def toy(point: dict[str, float]) -> Figures:
    """Figures that are exactly their values at PLANTED: turns follow the wildness, the risk ratio
    the curve."""
    w, c = point["wildness"], point["wildness_curve"]
    return {
        "quick": {"turns": {"value": 22 + 300 * (w - 0.07)}, "risk_ratio": {"value": 0.5 + 0.2 * (c - 2.5)}}
    }


def test_a_planted_optimum_is_recovered_within_ten_percent_in_thirty_trials() -> None:
    summary = calibrate(TOY, SPACE, toy, 30, seed=0, start=START)
    assert len(summary["trials"]) == 30
    best = summary["best"]["point"]
    for name, planted in PLANTED.items():
        assert abs(best[name] - planted) <= 0.1 * planted, (name, best)
    assert summary["all_inside"] and summary["adoptable"]
    assert summary["baseline"]["point"] == START  # the first trial is the presets' own point
    moved = {m["figure"]: m for m in summary["figures"]}
    assert moved["turns"]["baseline"] == pytest.approx(19.0)  # 22 + 300 × (0.06 − 0.07)
    assert summary["tensions"] == []  # each figure has its own number: nothing pulls apart
    slopes = summary["slopes"]
    assert slopes["quick:turns"]["wildness"] > 1 > abs(slopes["quick:turns"]["wildness_curve"])


def test_figures_that_want_one_number_moved_both_ways_are_named() -> None:
    def torn(point: dict[str, float]) -> Figures:
        # turns want the wildness at 0.07, the risk ratio at 0.05: no point satisfies both
        w = point["wildness"]
        return {
            "quick": {
                "turns": {"value": 22 + 300 * (w - 0.07)},
                "risk_ratio": {"value": 0.5 + 5 * (w - 0.05)},
            }
        }

    summary = calibrate(TOY, SPACE, torn, 15, seed=1, start=START)
    (tension,) = summary["tensions"]
    assert tension["figures"] == ["quick:risk_ratio", "quick:turns"] and tension["cosine"] < -0.9
    (number,) = tension["numbers"]
    assert number == {"number": "wildness", "quick:risk_ratio": "down", "quick:turns": "up"}


class Interrupted(Exception):
    pass


def test_an_interrupted_calibration_resumes_as_if_never_stopped(tmp_path: Path) -> None:
    whole = calibrate(TOY, SPACE, toy, 14, seed=4, start=START, study_path=tmp_path / "whole.sqlite3")
    calls: list[dict[str, float]] = []

    def stops_at_the_sixth(point: dict[str, float]) -> Figures:
        calls.append(point)
        if len(calls) == 6:
            raise Interrupted  # killed in the middle of trial 5
        return toy(point)

    study = tmp_path / "cut.sqlite3"
    with pytest.raises(Interrupted):
        calibrate(TOY, SPACE, stops_at_the_sixth, 14, seed=4, start=START, study_path=study)
    resumed_calls: list[dict[str, float]] = []
    started: list[int] = []

    def counted(point: dict[str, float]) -> Figures:
        resumed_calls.append(point)
        return toy(point)

    resumed = calibrate(
        TOY, SPACE, counted, 14, seed=4, start=START, study_path=study, on_start=started.append
    )
    assert started == [5] and len(resumed_calls) == 9  # the five kept, the cut one played again
    assert resumed_calls[0] == calls[5]  # the trial cut short is proposed again, the same point
    assert [t["point"] for t in resumed["trials"]] == [t["point"] for t in whole["trials"]]
    assert resumed["best"] == whole["best"]
    again: list[dict[str, float]] = []
    calibrate(TOY, SPACE, lambda p: again.append(p) or toy(p), 14, seed=4, start=START, study_path=study)
    assert again == []  # a finished study plays nothing more


def test_a_study_made_otherwise_is_refused_not_mixed(tmp_path: Path) -> None:
    study = tmp_path / "study.sqlite3"
    calibrate(TOY, SPACE, toy, 2, seed=4, start=START, study_path=study)
    other = Space.parse(["wildness=0.03:0.09", "wildness_curve=1.5:4.5"], [])
    for space, seed in ((other, 4), (SPACE, 5)):
        with pytest.raises(CalibrationError) as refused:
            calibrate(TOY, space, toy, 3, seed=seed, start=START, study_path=study)
        assert refused.value.code == "calibration_mismatch"
    assert len(calibrate(TOY, SPACE, toy, 3, seed=4, start=START, study_path=study)["trials"]) == 3


def test_the_book_target_and_bad_targets() -> None:
    book = Target.from_json(book_target())
    quick, dawood = book.presets
    assert quick.twins and not dawood.twins and (quick.games, dawood.games) == (200, 60)
    assert {f.name for f in quick.figures} == {
        "risk_ratio",
        "walls_length_ratio",
        "longest_turn",
        "lunge_share",
        "turns",
    }
    assert Target.from_json(book.to_json()) == book
    (turns,) = dawood.figures
    assert (turns.deviation(43.2), turns.deviation(28.8), turns.deviation(47.0)) == pytest.approx(
        (1, -1, 1.528), 1e-3
    )
    assert turns.term(None) == 25.0 and not turns.inside(None)
    bad = [
        [],
        {"blitz": {"figures": {"turns": {"value": 1, "band": [0, 2]}}}},
        {"quick": {"figures": {}}},
        {"quick": {"figures": {"speed": {"value": 1, "band": [0, 2]}}}},
        {"quick": {"figures": {"turns": {"value": 3, "band": [0, 2]}}}},
        {"quick": {"figures": {"turns": {"value": 1, "band": [0, 2], "weight": 0}}}},
        {"quick": {"figures": {"turns": {"value": True, "band": [0, 2]}}}},
        {"quick": {"games": 0, "figures": {"turns": {"value": 1, "band": [0, 2]}}}},
        {"quick": {"twins": False, "figures": {"walls_length_ratio": {"value": 1.3, "band": [1, 2]}}}},
    ]
    for data in bad:
        with pytest.raises(CalibrationError) as refused:
            Target.from_json(data)
        assert refused.value.code == "bad_target", data


def test_the_space_keeps_the_books_numbers_apart() -> None:
    assert Space.parse([], []).ranges == CALIBRATABLE
    free = Space.parse(["wildness=0.04:0.08"], ["wall_loss_full=0.7:0.95"])
    assert free.free == {"wall_loss_full"}
    for params, frees in (
        (["wall_loss_full=0.7:0.9"], []),  # the book's own: only with --free
        ([], ["wildness=0.04:0.08"]),  # calibratable: --param
        (["wildness=0.04:0.08", "wildness=0.05:0.07"], []),
        (["wildness=0.08:0.04"], []),
        (["wildness=0.04"], []),
        (["colour=0:1"], []),
    ):
        with pytest.raises(CalibrationError) as refused:
            Space.parse(params, frees)
        assert refused.value.code == "bad_param", (params, frees)


def test_a_point_with_a_free_book_number_is_reported_never_adoptable() -> None:
    space = Space.parse(["wildness=0.03:0.1"], ["man_loss=0:0.3"])

    def figures(point: dict[str, float]) -> Figures:
        return {
            "quick": {"turns": {"value": 22 + 300 * (point["wildness"] - 0.07)}, "risk_ratio": {"value": 0.5}}
        }

    summary = calibrate(TOY, space, figures, 4, seed=2)
    assert not summary["adoptable"] and summary["free"] == ["man_loss"]


SMALL = {"bases_per_side": 2, "soldiers_per_base": 3}
SMALL_TARGET = {"custom": {"games": 3, "figures": {"turns": {"value": 12, "band": [9, 15]}}}}


def test_a_trial_cut_short_keeps_its_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = Target.from_json({"custom": {**SMALL_TARGET["custom"], "twins": True}})
    state = tmp_path / "pages.jsonl"
    ticks: list[int] = []

    def stop_after_four(n: int) -> None:
        ticks.append(n)
        if sum(ticks) >= 4:
            raise Interrupted

    evaluator = LabEvaluator(
        target, bot="easy", seed=1, overrides=SMALL, state_path=state, progress=stop_after_four
    )
    with pytest.raises(Interrupted):
        evaluator({"wildness": 0.05})
    assert len(state.read_text().splitlines()) == 4
    played = counting(monkeypatch)
    evaluator.progress = None
    figures = evaluator({"wildness": 0.05})
    assert len(played) == 2  # 3 pages and 3 twins, 4 kept
    fresh = LabEvaluator(target, bot="easy", seed=1, overrides=SMALL)({"wildness": 0.05})
    assert figures == fresh


def test_the_calibrate_command_writes_its_report_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target, out, picture, study = (tmp_path / n for n in ("t.json", "out.json", "out.png", "s.sqlite3"))
    target.write_text(json.dumps(SMALL_TARGET))
    args = [
        "lab",
        "calibrate",
        "--target",
        str(target),
        "--preset",
        "custom",
        "--seed",
        "1",
        "--workers",
        "1",
    ]
    args += ["--set", "bases_per_side=2", "--set", "soldiers_per_base=3", "--param", "wildness=0.03:0.1"]
    args += ["--study", str(study), "--json", str(out), "--plot", str(picture)]
    assert main([*args, "--trials", "2"]) == 0
    summary = json.loads(out.read_text())
    assert [t["number"] for t in summary["trials"]] == [0, 1]
    assert summary["baseline"]["point"] == {"wildness": 0.06}
    assert summary["figures"][0]["figure"] == "turns" and summary["settings"]["trials"] == 2
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(f"{study}.pages.jsonl").exists()
    capsys.readouterr()
    played = counting(monkeypatch)
    assert main([*args, "--trials", "3"]) == 0
    err = capsys.readouterr().err
    assert "resuming: 2 of 3 trials already played" in err and "trial 2: score" in err
    assert len(played) == 3  # one new trial's three pages, nothing of the first two
    assert [t["point"] for t in json.loads(out.read_text())["trials"]][:2] == [
        t["point"] for t in summary["trials"]
    ]


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (["--target", "missing.json"], "bad_target"),
        (["--param", "wall_loss_full=0.7:0.9"], "bad_param"),
        (["--param", "shake_sigmas=2:4"], "bad_request"),  # RuleSet refuses a corner of the space
        (["--trials", "0"], "bad_param"),
    ],
)
def test_bad_calibrations_are_refused_with_a_code(
    extra: list[str],
    code: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("t.json").write_text(json.dumps(SMALL_TARGET))
    args = [
        "lab",
        "calibrate",
        "--target",
        "t.json",
        "--set",
        "bases_per_side=2",
        "--set",
        "soldiers_per_base=3",
    ]
    assert main([*args, *extra, "--json", "out.json"]) == 2
    assert f"lab: {code}" in capsys.readouterr().err
    assert not Path("out.json").exists() and not Path("calibrate.sqlite3").exists()


def test_target_and_free_belong_to_calibrate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "--preset", "custom", "--games", "1", "--free", "man_loss=0:1"]) == 2
    assert "belong to `dotfight lab calibrate`" in capsys.readouterr().err
