"""`dotfight lab sweep`: the grid, the same result whatever the workers, and resuming from the state file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dotfight.lab.runner as runner
from dotfight.cli import main
from dotfight.lab import LabConfig
from dotfight.lab.page import PageRecord, play_page
from dotfight.lab.sweep import Param, Sweep, page_key, read_state, run_sweep

SMALL = {"bases_per_side": 2, "soldiers_per_base": 3}
SMALL_ARGS = ["--preset", "custom", "--set", "bases_per_side=2", "--set", "soldiers_per_base=3"]


def small_sweep(games: int = 3, *params: str) -> Sweep:
    base = LabConfig(preset="custom", overrides=dict(SMALL), games=games, seed=5)
    return Sweep(base, tuple(Param.parse(p) for p in params or ("wildness=0.05:0.15:2",)))


def test_param_specs() -> None:
    assert Param.parse("wildness=0.02:0.2:8").values[:3] == (0.02, 0.0457142857143, 0.0714285714286)
    assert Param.parse(" outside_margin = 0,20 ,40").values == (0.0, 20.0, 40.0)
    for bad in ("wildness", "wildness=", "wildness=1:2", "wildness=a,b", "wildness=0:1:0", "nope=1"):
        with pytest.raises(ValueError, match="--param"):
            Param.parse(bad)


def test_a_grid_of_two_and_its_rules() -> None:
    sweep = small_sweep(2, "wildness=0.05,0.1", "send_max=0,2,5")
    assert len(sweep.points) == 6
    assert sweep.points[1] == {"wildness": 0.05, "send_max": 2.0}
    rules = sweep.config_at(sweep.points[5]).rules()
    assert (rules.wildness, rules.send_max, rules.bases_per_side) == (0.1, 5, 2)
    with pytest.raises(ValueError, match="differ"):
        small_sweep(2, "wildness=0.05", "wildness=0.1")
    with pytest.raises(ValueError, match="one --param"):
        small_sweep(2, "wildness=0.05", "send_max=1", "man_loss=0.1")
    with pytest.raises(ValueError, match="wall_loss_full"):  # a bad point stops the sweep before any page
        small_sweep(2, "wall_loss_full=0.5:1.5:3")


def test_the_same_seed_gives_the_same_sweep_whatever_the_workers() -> None:
    one = run_sweep(small_sweep(), workers=1)
    two = run_sweep(small_sweep(), workers=2)
    assert one == two
    assert one["complete"] and len(one["points"]) == 2
    low, high = (p["figures"]["turns"]["value"] for p in one["points"])
    assert one["points"][0]["rules"]["wildness"] == 0.05
    assert low != high  # the points really played different rules


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    played: list[int] = []

    def play(config: LabConfig, index: int) -> PageRecord:
        played.append(index)
        return play_page(config, index)

    monkeypatch.setattr(runner, "play_page", play)
    return played


def test_a_rerun_plays_nothing_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "pages.jsonl"
    first = run_sweep(small_sweep(), workers=2, state_path=state)
    assert len(read_state(state)) == 2 * 2 * 3  # points × (page, twin) × games
    played = counting(monkeypatch)
    again = run_sweep(small_sweep(), workers=1, state_path=state)
    assert played == [] and again == first


def test_an_interrupted_sweep_continues_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = run_sweep(small_sweep(), workers=1)
    state = tmp_path / "pages.jsonl"
    run_sweep(small_sweep(), workers=1, state_path=state)
    lines = state.read_text().splitlines(keepends=True)
    state.write_text("".join(lines[:5]) + lines[5][:30])  # killed while writing the sixth page
    played = counting(monkeypatch)
    points: list[dict[str, Any]] = []
    resumed = run_sweep(small_sweep(), workers=1, state_path=state, on_point=points.append)
    assert len(played) == len(lines) - 5
    assert resumed == whole
    assert [len(p["points"]) for p in points] == [1, 2]  # the summary grows point by point


def test_more_games_reuse_the_pages_already_played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "pages.jsonl"
    run_sweep(small_sweep(3), workers=1, state_path=state)
    played = counting(monkeypatch)
    run_sweep(small_sweep(4), workers=1, state_path=state)
    assert played == [3, 3, 3, 3]  # only page 3, at both points, with its twin


def test_a_page_key_follows_everything_the_page_depends_on() -> None:
    config = small_sweep().config_at({"wildness": 0.05})
    key = page_key(config, 1, "code")
    assert page_key(config, 1, "code") == key
    assert page_key(config.twin(), 1, "code") != key
    assert page_key(config, 2, "code") != key
    assert page_key(config, 1, "other code") != key
    assert page_key(small_sweep().config_at({"wildness": 0.06}), 1, "code") != key


def test_the_sweep_command_writes_json_and_plot_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, picture = tmp_path / "out.json", tmp_path / "out.png"
    args = ["lab", "sweep", *SMALL_ARGS, "--games", "2", "--seed", "1", "--param", "wildness=0.05:0.1:2"]
    args += ["--param", "send_max=0,5", "--workers", "2", "--json", str(out), "--plot", str(picture)]
    assert main(args) == 0
    summary = json.loads(out.read_text())
    assert summary["complete"] and len(summary["points"]) == 4
    assert summary["sweep"]["params"][1] == {"name": "send_max", "values": [0.0, 5.0]}
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(f"{out}.pages.jsonl").exists()
    capsys.readouterr()
    assert main(args) == 0
    assert "resuming: 16 of 16 pages already played" in capsys.readouterr().err
    assert json.loads(out.read_text()) == summary


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep"], "needs --param"),
        (["--param", "wildness=0.1"], "belong to `dotfight lab sweep`"),
        (["sweep", "--param", "wildness=x"], "--param"),
        (["sweep", "--param", "wildness=0.1:4:2"], "wildness"),
    ],
)
def test_bad_sweeps_are_refused_with_a_code(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.json"
    assert main(["lab", *SMALL_ARGS, "--games", "1", *args, "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad_request" in err and message in err
    assert not out.exists()


def test_a_sweep_without_twins_says_why_its_walls_panel_is_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.figure import Figure

    drawn: list[Figure] = []
    save = Figure.savefig

    def keep(figure: Figure, *args: Any, **kwargs: Any) -> None:
        drawn.append(figure)
        save(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    out, picture = tmp_path / "out.json", tmp_path / "out.png"
    args = ["lab", "sweep", *SMALL_ARGS, "--games", "2", "--seed", "1", "--param", "send_max=0,5"]
    assert main([*args, "--no-twins", "--json", str(out), "--plot", str(picture)]) == 0
    (figure,) = drawn
    panels = {ax.get_title(): ax for ax in figure.axes}
    walls = panels["page length: walls / free walls"]
    assert any("--no-twins" in text.get_text() for text in walls.texts)
    assert walls.get_xlim() == (0.0, 5.0)  # the sweep's range, not matplotlib's empty default
    assert not walls.lines
    assert panels["turns a page"].lines  # the measured figures are drawn as before
